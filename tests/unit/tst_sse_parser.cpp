// SseParser: text/event-stream as it arrives from a provider, in TCP segments of any size.
#include "llm/sse_parser.h"

#include <QTest>

using autocomp::SseEvent;
using autocomp::SseParser;

using EventList = QList<QPair<QByteArray, QByteArray>>; // (event name, data)

namespace {

EventList toList(const QList<SseEvent> &events)
{
    EventList out;
    for (const SseEvent &e : events)
        out.append({e.event, e.data});
    return out;
}

// Feeds `stream` in pieces of `chunk` bytes (0: all at once).
EventList parseInChunks(const QByteArray &stream, int chunk)
{
    SseParser parser;
    EventList out;
    if (chunk <= 0)
        return toList(parser.feed(stream));
    for (qsizetype i = 0; i < stream.size(); i += chunk)
        out += toList(parser.feed(stream.mid(i, chunk)));
    return out;
}

} // namespace

class TestSseParser : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parse_data();
    void parse();
    void pendingHoldsIncompleteEvent();
    void openAiStreamByteByByte();
};

void TestSseParser::parse_data()
{
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<EventList>("expected");

    QTest::newRow("single data event") << QByteArray("data: {\"a\":1}\n\n") << EventList{{{}, "{\"a\":1}"}};
    QTest::newRow("two events") << QByteArray("data: one\n\ndata: two\n\n") << EventList{{{}, "one"}, {{}, "two"}};
    QTest::newRow("multi-line data joined with newline")
        << QByteArray("data: line 1\ndata: line 2\ndata:\n\n") << EventList{{{}, "line 1\nline 2\n"}};
    QTest::newRow("comments and keep-alives ignored")
        << QByteArray(": keep-alive\n\n: OPENROUTER PROCESSING\ndata: x\n\n") << EventList{{{}, "x"}};
    QTest::newRow("CRLF line endings") << QByteArray("event: message_start\r\ndata: {}\r\n\r\ndata: y\r\n\r\n")
                                       << EventList{{"message_start", "{}"}, {{}, "y"}};
    QTest::newRow("event names (Anthropic style)")
        << QByteArray("event: content_block_delta\ndata: {\"d\":\"hi\"}\n\nevent: message_stop\ndata: {}\n\n")
        << EventList{{"content_block_delta", "{\"d\":\"hi\"}"}, {"message_stop", "{}"}};
    QTest::newRow("event without data") << QByteArray("event: ping\n\n") << EventList{{"ping", {}}};
    QTest::newRow("no space after colon") << QByteArray("data:tight\n\n") << EventList{{{}, "tight"}};
    QTest::newRow("only one leading space removed")
        << QByteArray("data:  two spaces\n\n") << EventList{{{}, " two spaces"}};
    QTest::newRow("colon inside the value")
        << QByteArray("data: {\"k\": \"a:b\"}\n\n") << EventList{{{}, "{\"k\": \"a:b\"}"}};
    QTest::newRow("unknown fields ignored") << QByteArray("id: 7\nretry: 100\ndata: z\n\n") << EventList{{{}, "z"}};
    QTest::newRow("event name does not leak into the next event")
        << QByteArray("event: error\ndata: bad\n\ndata: fine\n\n") << EventList{{"error", "bad"}, {{}, "fine"}};
    QTest::newRow("incomplete last event not emitted")
        << QByteArray("data: done\n\ndata: partial") << EventList{{{}, "done"}};
    QTest::newRow("data but no blank line yet") << QByteArray("data: waiting\n") << EventList{};
    QTest::newRow("DONE sentinel") << QByteArray("data: [DONE]\n\n") << EventList{{{}, "[DONE]"}};
    QTest::newRow("UTF-8 split inside a character") << QByteArray("data: \xc2\xb5s \xe2\x86\x92 \xf0\x9f\x9a\x80\n\n")
                                                    << EventList{{{}, "\xc2\xb5s \xe2\x86\x92 \xf0\x9f\x9a\x80"}};
}

void TestSseParser::parse()
{
    QFETCH(QByteArray, stream);
    QFETCH(EventList, expected);

    // Whatever the segment boundaries, the events are the same.
    for (int chunk : {0, 1, 2, 3, 5, 7, 64}) {
        const EventList actual = parseInChunks(stream, chunk);
        if (actual != expected) {
            QByteArray got;
            for (const auto &[event, data] : actual)
                got += "[" + event + "|" + data + "] ";
            QFAIL(qPrintable(QStringLiteral("chunk size %1 gave %2").arg(chunk).arg(QString::fromUtf8(got))));
        }
    }
}

void TestSseParser::pendingHoldsIncompleteEvent()
{
    SseParser parser;
    QVERIFY(parser.feed("data: {\"choices\":[{\"delta\":{\"content\":\"Hel").isEmpty());
    QVERIFY(parser.pending().contains("Hel"));
    const QList<SseEvent> events = parser.feed("lo\"}}]}\n\n");
    QCOMPARE(events.size(), 1);
    QCOMPARE(events.first().data, QByteArray("{\"choices\":[{\"delta\":{\"content\":\"Hello\"}}]}"));
    QVERIFY(parser.pending().isEmpty());
}

void TestSseParser::openAiStreamByteByByte()
{
    QByteArray stream;
    QList<QByteArray> payloads;
    for (int i = 0; i < 50; ++i) {
        const QByteArray payload = "{\"choices\":[{\"delta\":{\"content\":\"token " + QByteArray::number(i)
            + "\\n\"}}]}";
        payloads << payload;
        stream += "data: " + payload + "\r\n\r\n";
        if (i % 10 == 0)
            stream += ": keep-alive\r\n\r\n";
    }
    stream += "data: [DONE]\r\n\r\n";
    payloads << "[DONE]";

    SseParser parser;
    QList<QByteArray> got;
    for (char byte : std::as_const(stream))
        for (const SseEvent &e : parser.feed(QByteArray(1, byte)))
            got << e.data;
    QCOMPARE(got, payloads);
    QVERIFY(parser.pending().isEmpty());
}

QTEST_GUILESS_MAIN(TestSseParser)
#include "tst_sse_parser.moc"
