"""The `tmakit` command installed with the package: the C++ CLI built with it
(tmakit/bin/tmakit, beside the preload library of `tmakit watch` in tmakit/lib)."""
from __future__ import annotations

import os
import sys
from typing import List, Optional


def binary() -> str:
    """Path of the packaged tmakit executable."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "tmakit")


def main(argv: Optional[List[str]] = None) -> int:
    exe = binary()
    if not os.access(exe, os.X_OK):
        print(f"tmakit: error: the packaged CLI is missing ({exe}); reinstall the package", file=sys.stderr)
        return 2
    args = sys.argv[1:] if argv is None else argv
    os.execv(exe, [exe, *args])
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
