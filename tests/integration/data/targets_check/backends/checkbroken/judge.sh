# The fixture's judge: a candidate that says WRONG is incorrect, any other is correct in 1 ms.
if grep -q WRONG "$1"; then
  printf '{"status": "incorrect", "correct": false, "log": "the candidate says WRONG"}\n' > "$2"
  echo "the candidate says WRONG" >&2
  exit 1
fi
printf '{"status": "ok", "correct": true, "metrics": {"latency_ms": 1}, "log": "fine"}\n' > "$2"
