"""How flightdeck writes and reads its own files: atomic JSONL, strict JSON, UTC timestamps."""
