import sys

from vllm_guard.cli import main

sys.exit(main())
