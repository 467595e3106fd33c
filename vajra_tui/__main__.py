import sys

from vajra_tui.cli.main import main

sys.exit(main())
