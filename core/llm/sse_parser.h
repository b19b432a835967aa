#pragma once

#include <QByteArray>
#include <QList>

namespace autocomp {

struct SseEvent
{
    QByteArray event; // empty when the stream names none
    QByteArray data; // data lines joined with '\n'
};

// Incremental parser for text/event-stream: feed bytes as they arrive, take complete events.
class SseParser
{
public:
    QList<SseEvent> feed(const QByteArray &bytes);
    // What was received but did not form a complete event (for error logs when a stream breaks).
    QByteArray pending() const { return m_buffer; }

private:
    QByteArray m_buffer;
    SseEvent m_current;
    bool m_hasData = false;
};

} // namespace autocomp
