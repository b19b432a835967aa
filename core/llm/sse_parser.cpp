#include "llm/sse_parser.h"

namespace autocomp {

QList<SseEvent> SseParser::feed(const QByteArray &bytes)
{
    QList<SseEvent> out;
    m_buffer += bytes;
    qsizetype start = 0;
    while (true) {
        const qsizetype nl = m_buffer.indexOf('\n', start);
        if (nl < 0)
            break;
        QByteArray line = m_buffer.mid(start, nl - start);
        start = nl + 1;
        if (line.endsWith('\r'))
            line.chop(1);
        if (line.isEmpty()) {
            if (m_hasData || !m_current.event.isEmpty())
                out << m_current;
            m_current = {};
            m_hasData = false;
            continue;
        }
        if (line.startsWith(':'))
            continue; // comment / keep-alive
        const qsizetype colon = line.indexOf(':');
        const QByteArray field = colon < 0 ? line : line.left(colon);
        QByteArray value = colon < 0 ? QByteArray() : line.mid(colon + 1);
        if (value.startsWith(' '))
            value.remove(0, 1);
        if (field == "data") {
            if (m_hasData)
                m_current.data += '\n';
            m_current.data += value;
            m_hasData = true;
        } else if (field == "event") {
            m_current.event = value;
        }
    }
    m_buffer.remove(0, start);
    return out;
}

} // namespace autocomp
