"""A run's row and what is read of it: its record (`record`: the begin, the transcript, the
event log), its status changes (`transitions`), the operators' listing (`query`), the
clients' view (`view`) and its pending write or turn (`pending`, `pending_context`), the
answer ceiling (`answer`) and an operator's resolution of an unknown write (`resolution`)."""
