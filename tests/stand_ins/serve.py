"""Serve the model and a search stand-in until stopped, for trying the CLI offline.

It prints the variables to export; `--provider` picks which search API is stood in for.

python tests/stand_ins/serve.py --latency 0.2 > /tmp/standins.env &
set -a; . /tmp/standins.env; set +a; deep-research run "..."
"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stand_ins.bocha import BochaServer
from stand_ins.chat import ChatServer
from stand_ins.duckduckgo import DuckDuckGoServer
from stand_ins.judge import JudgeBrain
from stand_ins.search import SearchServer
from stand_ins.searxng import SearxngServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per model call")
    parser.add_argument("--search-latency", type=float, default=0.0, help="seconds per search")
    parser.add_argument("--subtasks", type=int, default=3)
    parser.add_argument(
        "--provider", choices=["tavily", "bocha", "searxng", "duckduckgo"], default="tavily"
    )
    args = parser.parse_args()
    servers = {
        "tavily": SearchServer,
        "bocha": BochaServer,
        "searxng": SearxngServer,
        "duckduckgo": DuckDuckGoServer,
    }
    chat, search = ChatServer().start(), servers[args.provider]().start()
    judge = ChatServer(JudgeBrain()).start()  # for `deep-research eval`, on its own port
    chat.latency, search.latency = args.latency, args.search_latency
    chat.brain.subtasks = args.subtasks
    print(f"OPENAI_BASE_URL={chat.url}/v1")
    print("OPENAI_API_KEY=sk-stand-in")
    variables = {
        "tavily": {"TAVILY_API_BASE_URL": search.url, "TAVILY_API_KEY": "tvly-stand-in"},
        "bocha": {"BOCHA_API_BASE_URL": search.url, "BOCHA_API_KEY": getattr(search, "key", "")},
        "searxng": {"SEARXNG_URL": search.url},
        "duckduckgo": {"DUCKDUCKGO_BASE_URL": search.url},
    }[args.provider]
    for name, value in variables.items():
        print(f"{name}={value}")
    print("DEEP_RESEARCH_MODEL=stand-in")
    print(f"DEEP_RESEARCH_JUDGE_BASE_URL={judge.url}/v1")
    print("DEEP_RESEARCH_JUDGE_API_KEY=sk-judge-stand-in")
    print("DEEP_RESEARCH_JUDGE_MODEL=stand-in-judge", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
