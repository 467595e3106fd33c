"""Candidates from a language model: the OpenAI-compatible client, its prompts and feedback, the reply extractor and Tavily grounding."""
