// fake: status=ok latency_ms=100
void kernel() {}
