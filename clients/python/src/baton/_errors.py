"""The one error the client raises for an answer it did not want.

The service answers every refusal with an RFC 9457 problem document
(docs/errors.md); its members are lifted onto the exception so callers can
branch on ``code``. Failing to reach the service at all (after every retry)
raises what httpx raised, so a ``BatonError`` always means "the service
answered this".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

#: The code of an answer that was not the problem document the service always sends (e.g. from a proxy).
UNEXPECTED_RESPONSE = "unexpected_response"


class BatonError(Exception):
    """A refusal by the service: ``status``, the stable ``code``, a ``detail`` a person can act on."""

    status: int
    code: str
    detail: str
    #: Every offending field, as ``{"field": ..., "message": ...}``; empty when the problem names none.
    errors: list[dict[str, str]]
    #: The whole problem document, with members this class does not lift (``epoch``, ``handoffId``, ...).
    problem: dict[str, Any]

    def __init__(self, problem: Mapping[str, Any]) -> None:
        super().__init__(str(problem.get("detail", "")))
        self.problem = dict(problem)
        self.status = int(problem.get("status", 0))
        self.code = str(problem.get("code", UNEXPECTED_RESPONSE))
        self.detail = str(problem.get("detail", ""))
        self.errors = list(problem.get("errors") or [])

    @property
    def request_id(self) -> str | None:
        """The id the service logged the request under; quote it when reporting a problem."""
        value = self.problem.get("requestId")
        return value if isinstance(value, str) else None

    def __repr__(self) -> str:
        return f"BatonError(status={self.status}, code={self.code!r}, detail={self.detail!r}, errors={self.errors!r})"

    def __str__(self) -> str:
        fields = "; ".join(f"{e.get('field')}: {e.get('message')}" for e in self.errors)
        return f"{self.status} {self.code}: {self.detail}" + (f" ({fields})" if fields else "")


def unexpected(status: int, detail: str, body: str | None = None) -> BatonError:
    """A ``BatonError`` for an answer that is not what the protocol says (wrong status, media type or body)."""
    problem: dict[str, Any] = {
        "type": "about:blank",
        "title": "Unexpected response",
        "status": status,
        "code": UNEXPECTED_RESPONSE,
        "detail": detail,
    }
    if body:
        # A bounded excerpt, so a huge HTML error page does not end up in every log line.
        problem["body"] = body[:2000]
    return BatonError(problem)


def error_from_answer(status: int, content_type: str, text: str) -> BatonError:
    """The ``BatonError`` of an error answer: its problem document, or an ``unexpected_response`` one."""
    if content_type.lower().startswith(("application/problem+json", "application/json")):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if (
            isinstance(parsed, dict)
            and isinstance(parsed.get("status"), int)
            and isinstance(parsed.get("code"), str)
            and isinstance(parsed.get("detail"), str)
        ):
            return BatonError(parsed)
    return unexpected(
        status, "The service answered with a status the client did not ask for, without a problem document.", text
    )
