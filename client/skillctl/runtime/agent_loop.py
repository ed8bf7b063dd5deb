"""A small agent loop over a session: ask the model, run its tool calls, follow pipelines.

    model = OpenAIChat("https://api.openai.com/v1", model="gpt-4o-mini", api_key=key)
    session = skills.session()
    messages = [{"role": "system", "content": "You are a helpful agent.\\n\\n" + skills.prompt(tier="catalog")}]
    result = run_turn(session, messages, "the login page crashes", model)
    print(result.reply)

One call of :func:`run_turn` is one user message: ``session.begin(message)``, then the model is
asked with the session's tools (asked anew each time: loading a skill adds tools); every tool
call goes to ``session.handle_tool_call`` and its text, a refusal included, back to the model as
the ``tool`` message; a reply without tool calls ends the turn unless the active skill's
``next_skill`` follows (``session.on_turn_end``): its ``transition.message`` is added as a
``system`` message and the model is asked again. ``messages`` is the conversation, extended in
place, so the next call carries on from it.

The model sits behind :class:`ChatModel` (one method). :class:`OpenAIChat` speaks OpenAI's Chat
Completions to any compatible server (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM...): https, or
plain http only to this machine (the transport rule of every skillctl request, so an API key
never crosses a network in clear text).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Protocol

from skillctl.errors import NetworkError
from skillctl.runtime.pipeline import Transition

MAX_MODEL_CALLS = 25  # per user message (tool rounds and pipeline steps); a model going round in circles stops
MODEL_TIMEOUT_S = 120.0  # one completion; a local model on a CPU can be slow, a hung server must not hang us


class ChatModel(Protocol):
    def complete(self, messages: list[dict], tools: list[dict]) -> dict:
        """The assistant message (``content``, ``tool_calls``) for the conversation so far."""


@dataclass
class TurnResult:
    reply: str  # the model's last text
    finished: bool  # False when MAX_MODEL_CALLS ran out first
    model_calls: int = 0
    tool_calls: int = 0
    transitions: list[Transition] = field(default_factory=list)


def run_turn(
    session, messages: list[dict], user_message: str, model: ChatModel, *, max_model_calls: int = MAX_MODEL_CALLS
) -> TurnResult:
    """Answer one user message; ``messages`` grows by everything said."""
    session.begin(user_message)
    messages.append({"role": "user", "content": user_message})
    result = TurnResult(reply="", finished=False)
    while result.model_calls < max_model_calls:
        reply = model.complete(messages, session.tool_definitions("openai"))
        result.model_calls += 1
        calls = reply.get("tool_calls") or []
        result.reply = reply.get("content") or ""
        messages.append(
            {"role": "assistant", "content": reply.get("content"), **({"tool_calls": calls} if calls else {})}
        )
        for call in calls:
            function = call.get("function") or {}
            text = session.handle_tool_call(function.get("name"), function.get("arguments") or "{}")
            messages.append({"role": "tool", "tool_call_id": call.get("id") or uuid.uuid4().hex, "content": text})
            result.tool_calls += 1
        transition = session.on_turn_end(had_tool_calls=bool(calls))
        if transition is not None:
            messages.append({"role": "system", "content": transition.message})
        elif not calls:
            result.finished = True
            break
    result.transitions = session.transitions
    return result


class OpenAIChat:
    """Chat Completions (``POST {base_url}/chat/completions``) with the given model."""

    def __init__(
        self, base_url: str, *, model: str, api_key: str | None = None, timeout: float = MODEL_TIMEOUT_S
    ) -> None:
        from skillctl.transport import require_safe_url

        require_safe_url(base_url, what="the model's base URL")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self._api_key = api_key
        self.timeout = timeout

    def __repr__(self) -> str:  # never the key
        return f"OpenAIChat({self.url!r}, model={self.model!r})"

    def complete(self, messages: list[dict], tools: list[dict]) -> dict:
        from skillctl.transport import check_request, connection_cause, httpx

        body = {"model": self.model, "messages": messages, **({"tools": tools} if tools else {})}
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        try:
            with httpx.Client(timeout=self.timeout, event_hooks={"request": [check_request]}) as client:
                response = client.post(self.url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise NetworkError(
                f"the model at {self.url} could not be reached: {connection_cause(exc, server='model server')}",
                code="model.unreachable",
                hint="Check the base URL and that the server is running.",
            ) from None
        if response.status_code >= 400:
            raise NetworkError(
                f"the model at {self.url} answered {response.status_code}: {response.text[:300]}",
                code="model.http_error",
                hint="Check the model name and the API key.",
            )
        try:
            return response.json()["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise NetworkError(
                f"the model at {self.url} did not answer with a chat completion: {response.text[:300]}",
                code="model.bad_response",
            ) from None


__all__ = ["MAX_MODEL_CALLS", "ChatModel", "OpenAIChat", "TurnResult", "run_turn"]
