import sys

from vajra_tui.cli import main

sys.exit(main())
