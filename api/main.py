"""`agentrt-api`: serve the A2A server and operator API (default), purge runs, rotate seal
keys, manage operator tokens."""

import argparse
import logging
import sys
from datetime import timedelta

from agentrt.api import ops_tokens
from agentrt.api.settings import ApiSettings, key_digest


def _serve(settings: ApiSettings) -> None:
    import uvicorn

    from agentrt.api.app import create_app

    uvicorn.run(create_app(settings), host=settings.api_host, port=settings.api_port)


def _purge(settings: ApiSettings, run_ids: list[str], older_than_days: float | None) -> int:
    from agentrt.store.a2a_purge import purge_runs, purge_terminal_before
    from agentrt.store.context import utcnow
    from agentrt.store.open import open_store
    from agentrt.store.sealing import Sealer

    engine, ctx = open_store(
        settings.resolved_database_url(), Sealer.from_b64(settings.seal_keys_spec())
    )
    try:
        removed = purge_runs(ctx, run_ids) if run_ids else 0
        if older_than_days is not None:
            removed += purge_terminal_before(ctx, utcnow() - timedelta(days=older_than_days))
    finally:
        engine.dispose()
    return removed


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    parser = argparse.ArgumentParser(prog="agentrt-api", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("serve", help="serve A2A over JSON-RPC (the default)")
    purge = sub.add_parser("purge", help="remove runs with their A2A tasks and journals")
    purge.add_argument("run_ids", nargs="*", help="run uuids to remove")
    purge.add_argument("--older-than-days", type=float, help="settled runs finished before")
    hasher = sub.add_parser("hash-key", help="print the SHA-256 digest of an API key")
    hasher.add_argument("key")
    sub.add_parser("rotate", help="re-seal every sealed column under the active key")
    ops_tokens.add_parser(sub)
    args = parser.parse_args(argv)
    settings = ApiSettings()
    if args.command in (None, "serve"):
        _serve(settings)
    elif args.command == "purge":
        if not args.run_ids and args.older_than_days is None:
            parser.error("name run ids or --older-than-days")
        removed = _purge(settings, args.run_ids, args.older_than_days)
        sys.stdout.write(f"removed {removed} run(s)\n")
    elif args.command == "hash-key":
        sys.stdout.write(key_digest(args.key) + "\n")
    elif args.command == "rotate":
        from agentrt.store.rotate import main as rotate_main

        rotate_main([])
    elif args.command == "token":
        sys.exit(ops_tokens.run(settings, args))
    sys.exit(0)


if __name__ == "__main__":
    main()
