"""Run every benchmark script in this folder, one after another, in fresh processes."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent

if __name__ == "__main__":
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n# {script.name}", flush=True)
        if subprocess.run([sys.executable, str(script)], cwd=HERE).returncode:
            failed.append(script.name)
    if failed:
        sys.exit(f"benchmarks that crashed: {', '.join(failed)}")
