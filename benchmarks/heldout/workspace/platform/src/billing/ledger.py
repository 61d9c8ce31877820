"""The hourly ledger export to the ERP (ADR-0010)."""

from __future__ import annotations

import datetime as dt


def export_window(last_success: dt.datetime, now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """Payments to export: everything since the last successful run, up to the full hour."""
    end = now.replace(minute=0, second=0, microsecond=0)
    return last_success, end


def erp_record(payment: dict[str, object]) -> dict[str, object]:
    """One payment in the ERP's import format (FIN-19 is still open for the new ERP)."""
    return {
        "id": payment["id"],
        "amount_cents": payment["amount_cents"],
        "currency": payment["currency"],
        "booked_at": payment["captured_at"],
    }
