"""The tools of the ``calendar`` tool set: one user's calendars, living for one run."""

from __future__ import annotations

import copy
from typing import Any

from harness import ToolFailure

EVENTS: list[dict[str, Any]] = [
    {
        "event_id": "EVT-301",
        "calendar": "work",
        "title": "1:1 with Bo",
        "start": "2026-03-10T09:00:00+00:00",
        "end": "2026-03-10T09:30:00+00:00",
        "attendees": [{"email": "bo@example.com", "optional": False}],
        "location": None,
    },
    {
        "event_id": "EVT-302",
        "calendar": "work",
        "title": "Sprint review",
        "start": "2026-03-10T14:00:00+00:00",
        "end": "2026-03-10T15:00:00+00:00",
        "attendees": [{"email": "team@example.com", "optional": False}],
        "location": "Room Tejo",
    },
    {
        "event_id": "EVT-303",
        "calendar": "personal",
        "title": "Dentist",
        "start": "2026-03-10T17:30:00+00:00",
        "end": "2026-03-10T18:00:00+00:00",
        "attendees": [],
        "location": "Clinica Sorriso, Rua do Ouro 5",
    },
    {
        "event_id": "EVT-304",
        "calendar": "work",
        "title": "Budget planning",
        "start": "2026-03-11T10:00:00+00:00",
        "end": "2026-03-11T11:00:00+00:00",
        "attendees": [{"email": "ana@example.com", "optional": False}],
        "location": None,
    },
]

FREE = {
    "2026-03-10": ["10:00", "11:30", "15:30"],
    "2026-03-11": ["09:00", "11:00", "16:00"],
    "2026-03-12": ["09:30", "14:00"],
}


def _events(state: dict[str, Any]) -> list[dict[str, Any]]:
    return state.setdefault("events", copy.deepcopy(EVENTS))


def list_events(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    date, calendar = arguments.get("date", ""), arguments.get("calendar", "work")
    rows = [e for e in _events(state) if e["start"].startswith(date) and e["calendar"] == calendar]
    return {"date": date, "calendar": calendar, "events": rows}


def find_free_slots(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    date, minutes = arguments.get("date", ""), arguments.get("duration_minutes")
    if date not in FREE:
        return {"date": date, "slots": []}
    return {
        "date": date,
        "duration_minutes": minutes,
        "timezone": "+00:00",
        "slots": [f"{date}T{t}:00+00:00" for t in FREE[date]],
    }


def create_event(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    events = _events(state)
    if arguments.get("end", "") <= arguments.get("start", ""):
        raise ToolFailure("end must be after start")
    number = state.get("next_id", 401)
    state["next_id"] = number + 1
    event = {"event_id": f"EVT-{number}", "calendar": arguments.get("calendar", "work"), **arguments}
    events.append(event)
    return {
        "event_id": event["event_id"],
        "status": "confirmed",
        "title": arguments.get("title"),
        "start": arguments.get("start"),
    }


def cancel_event(arguments: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    events = _events(state)
    event = next((e for e in events if e["event_id"] == arguments.get("event_id")), None)
    if event is None:
        raise ToolFailure(f"event {arguments.get('event_id')!r} not found")
    events.remove(event)
    notify = arguments.get("notify_attendees", True)
    told = [a["email"] for a in event.get("attendees") or []] if notify else []
    return {"event_id": event["event_id"], "status": "cancelled", "notified": told}
