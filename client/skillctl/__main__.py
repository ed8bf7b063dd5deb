import sys

from skillctl.cli.launch import main

sys.exit(main())
