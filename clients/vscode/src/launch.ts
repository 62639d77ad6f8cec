// How the extension starts the daemon with a Python it found: `-c` rather than
// `-m agentls`, because `-m` imports runpy and its helpers first (about a third of the
// relay's start, measured in bench/bench_startup.py); `-P` keeps the workspace folder off
// sys.path, so a file in the opened folder named like a module (select.py, argparse.py) is
// never imported by the daemon. tests/test_vscode_launch.py runs exactly this line.
export const DAEMON_ARGS = ["-P", "-c", "import sys; from agentls.cli import main; sys.exit(main())"];
