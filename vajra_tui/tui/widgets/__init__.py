"""Small reusable widgets; each redraws only when its candidate's version moves."""
