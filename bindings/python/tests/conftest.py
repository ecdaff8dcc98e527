import os
import sys

# The verl shim (tests/shims/verl) stands in for verl, which is too heavy to install here.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "shims"))
