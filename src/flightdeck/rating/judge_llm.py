"""The ``llm`` judge: a rubric prompt answered fact by fact through one structured tool call.

The model is opened by the shared model layer (:func:`flightdeck.models.get_model`), the one
the LLM arm and the attached arm use, so the same model names work (``openai-api/<service>/<model>``
with ``<SERVICE>_BASE_URL`` and ``<SERVICE>_API_KEY`` for an OpenAI-compatible server,
``mockllm/model`` offline) and are checked the same way. What is the judge's own is here: the
rubric, and the verdict as a forced tool call.

The prompt file is a template; these placeholders are replaced by plain substitution (the
answer's own braces are never interpreted): ``{question}``, ``{answer_key}``, ``{facts}``
(numbered, one a line) and ``{answer}``. The model must call ``record_verdict`` with, per
fact number, ``present`` and ``quote`` (the answer's words that state it), and
``contradicts_key``. The answer is correct when every fact is present and it does not
contradict the key: the same rule the people apply, with the model reading for meaning.
"""

from __future__ import annotations

import asyncio
from typing import Any

from flightdeck.errors import InputError, JudgeFailed, ModelUnavailable
from flightdeck.models import ModelSettings, get_model
from flightdeck.params.sections import JudgeSpec
from flightdeck.rating.judgements import FactVerdict, Verdict
from flightdeck.suite.records import Answer, Key, Question

TOOL_NAME = "record_verdict"
PLACEHOLDERS = ("{question}", "{answer_key}", "{facts}", "{answer}")
_REQUIRED = ("{facts}", "{answer}")


def render_prompt(template: str, question: Question, key: Key, answer: Answer) -> str:
    """The rubric with the question, key, numbered facts and answer put in."""
    facts = "\n".join(f"{n}. {fact}" for n, fact in enumerate(key.required_facts, start=1))
    values = {
        "{question}": question.question,
        "{answer_key}": key.answer_key,
        "{facts}": facts,
        "{answer}": answer.answer,
    }
    # One pass over the template, so a placeholder inside the answer stays as written.
    out, i = [], 0
    while i < len(template):
        for name in PLACEHOLDERS:
            if template.startswith(name, i):
                out.append(values[name])
                i += len(name)
                break
        else:
            out.append(template[i])
            i += 1
    return "".join(out)


def verdict_tool() -> Any:
    """The tool the model must call: one entry per fact number, and contradicts_key."""
    from inspect_ai.tool import ToolInfo, ToolParams
    from inspect_ai.util import JSONSchema

    fact = JSONSchema(
        type="object",
        properties={
            "number": JSONSchema(type="integer", description="the fact's number in the list"),
            "present": JSONSchema(type="boolean", description="the answer states this fact"),
            "quote": JSONSchema(
                type="string",
                description="the answer's own words that state the fact; empty when absent",
            ),
        },
        required=["number", "present", "quote"],
        additionalProperties=False,
    )
    return ToolInfo(
        name=TOOL_NAME,
        description="Record, for every required fact, whether the answer states it.",
        parameters=ToolParams(
            properties={
                "facts": JSONSchema(type="array", items=fact),
                "contradicts_key": JSONSchema(
                    type="boolean",
                    description="the answer says something the answer key contradicts",
                ),
            },
            required=["facts", "contradicts_key"],
        ),
    )


def parse_verdict(arguments: dict[str, Any], key: Key) -> Verdict:
    """The tool call's arguments -> a Verdict; anything malformed is a JudgeFailed."""
    facts = arguments.get("facts")
    contradicts = arguments.get("contradicts_key")
    if not isinstance(facts, list) or not isinstance(contradicts, bool):
        raise JudgeFailed("record_verdict needs facts (a list) and contradicts_key (a boolean)")
    by_number: dict[int, tuple[bool, str | None]] = {}
    for entry in facts:
        if not isinstance(entry, dict):
            raise JudgeFailed(f"a facts entry is not an object: {entry!r}")
        number, present, quote = entry.get("number"), entry.get("present"), entry.get("quote")
        if not isinstance(number, int) or not 1 <= number <= len(key.required_facts):
            raise JudgeFailed(f"fact number {number!r} is not 1..{len(key.required_facts)}")
        if not isinstance(present, bool) or not isinstance(quote, str | None):
            raise JudgeFailed(f"fact {number}: present must be a boolean and quote a string")
        by_number[number] = (present, (quote or None) if present else None)
    missing = [n for n in range(1, len(key.required_facts) + 1) if n not in by_number]
    if missing:
        raise JudgeFailed(f"no verdict on fact(s) {', '.join(map(str, missing))}")
    verdicts = tuple(
        FactVerdict(fact, *by_number[n]) for n, fact in enumerate(key.required_facts, start=1)
    )
    return Verdict(all(v.present for v in verdicts) and not contradicts, verdicts, ())


def _model(spec: JudgeSpec) -> Any:
    """The judge's own inspect model; a model that cannot be opened is params.yaml's fault."""
    assert spec.model is not None
    settings = ModelSettings(spec.model, temperature=spec.temperature, max_retries=2, timeout=120)
    try:
        return get_model(settings, memoize=False)
    except InputError as exc:  # the name rule, the missing extra, or inspect's refusal
        reason = exc.reason if isinstance(exc, ModelUnavailable) else exc.message
        raise InputError(
            "params.yaml", None, f"judge {spec.name!r}: cannot open model {spec.model!r} ({reason})"
        ) from None


class LlmJudge:
    """A callable judge over one inspect model, on one event loop for the whole run."""

    def __init__(self, spec: JudgeSpec, *, model: Any = None) -> None:
        assert spec.prompt is not None
        if not spec.prompt.is_file():
            raise InputError(spec.prompt, None, f"prompt of judge {spec.name!r} not found")
        self.template = spec.prompt.read_text(encoding="utf-8")
        for name in _REQUIRED:
            if name not in self.template:
                raise InputError(spec.prompt, None, f"the prompt has no {name} placeholder; add it")
        self.spec = spec
        self._model = model
        self._runner = asyncio.Runner()

    def __call__(self, question: Question, key: Key, answer: Answer) -> Verdict:
        prompt = render_prompt(self.template, question, key, answer)
        return self._runner.run(self._judge(prompt, key))

    async def _judge(self, prompt: str, key: Key) -> Verdict:
        from inspect_ai.tool import ToolFunction

        if self._model is None:
            self._model = _model(self.spec)
        try:
            output = await self._model.generate(
                prompt, tools=[verdict_tool()], tool_choice=ToolFunction(name=TOOL_NAME)
            )
        except Exception as exc:  # a server that is down, a refused request: retry later
            raise JudgeFailed(f"the model call failed: {type(exc).__name__}: {exc}") from exc
        calls = [c for c in (output.message.tool_calls or []) if c.function == TOOL_NAME]
        if not calls:
            raise JudgeFailed(f"the model did not call {TOOL_NAME}")
        return parse_verdict(dict(calls[0].arguments), key)

    def close(self) -> None:
        self._runner.close()
