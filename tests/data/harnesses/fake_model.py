"""A stand-in for an LLM behind examples/llm_harness.py --model-cmd: one action per call.

It first tries to read outside the workspace (the harness must refuse), then greps for the
question's longest word, reads the first hit and answers citing it.
"""

import json
import sys

conversation = json.load(sys.stdin)
steps = conversation["steps"]
word = max(conversation["question"].rstrip("?").split(), key=len)
if not steps:
    action = {"tool": "read", "path": "../../../etc/passwd"}
elif len(steps) == 1:
    assert str(steps[0]["result"]).startswith("error: "), steps[0]
    action = {"tool": "grep", "pattern": word}
elif len(steps) == 2 and not steps[1]["result"]:
    action = {"answer": "not found", "citations": []}
elif len(steps) == 2:
    path, line = steps[1]["result"][0].split(":")[:2]
    action = {"tool": "read", "path": path, "start": int(line), "end": int(line)}
else:
    read = steps[2]["action"]
    uri = f"{read['path']}#L{read['start']}-L{read['end']}"
    action = {"answer": steps[2]["result"], "citations": [uri]}
print("some chatter first")
print(json.dumps(action))
