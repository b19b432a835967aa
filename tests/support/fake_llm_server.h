#pragma once

#include "fake_llm_script.h"
#include "recorded_request.h"

#include <QFile>
#include <QHostAddress>
#include <QObject>
#include <QSet>
#include <QTcpServer>
#include <QUrl>

#include <memory>
#include <optional>
#include <vector>

namespace autocomp::test {

class FakeHttpConnection;
class LlmDialect;
struct DialectRequest;

// A loopback HTTP server that speaks LLM providers' wire formats (see LlmDialect) and answers from a
// script (see FakeLlmScript), so tests run the real client against it. Every request is recorded in
// memory and, with setLogFile(), as one JSON line in a log as soon as it arrives. Requests are answered
// asynchronously, so any number can be in flight at once.
class FakeLlmServer : public QObject
{
    Q_OBJECT
public:
    explicit FakeLlmServer(QObject *parent = nullptr);
    ~FakeLlmServer() override;

    // Listens on 127.0.0.1 (or another address, such as ::1); port 0 picks a free port.
    bool listen(quint16 port = 0, const QHostAddress &address = QHostAddress(QHostAddress::LocalHost));
    quint16 port() const;
    QUrl baseUrl() const; // http://127.0.0.1:PORT, or http://[::1]:PORT
    QString errorString() const;

    // Replace the script (and reset every rule's progress). On failure the previous script stays.
    bool loadScript(const QString &path, QString *error = nullptr);
    bool loadScriptText(const QByteArray &yaml, const QString &baseDir, QString *error = nullptr);

    // Appends one JSON object per request to `path` (created if missing). False when it cannot be opened.
    bool setLogFile(const QString &path);
    // Appends a line per answered request: its X-Autocomp-Request header, then CLOCK_MONOTONIC nanoseconds
    // when the request had been read and when the last byte of the answer was handed to the socket. With
    // the client's own clock readings a benchmark can tell the server's time from the client's.
    bool setTimingFile(const QString &path);

    // A healthy peer that ends every answer by closing the connection, as HTTP/1.x allows:
    //  Delimited: the body has no Content-Length and no chunked framing ("Connection: close"); its end is the close.
    //  Framed: the body is framed as usual and keep-alive is announced, but the connection closes right after.
    // Every answer is complete; a client must keep each one.
    enum class CloseAfterAnswer { Off, Delimited, Framed };
    void setCloseAfterAnswer(CloseAfterAnswer mode) { m_closeAfterAnswer = mode; }

    QList<RecordedRequest> requests() const { return m_requests; }
    int requestCount() const { return int(m_requests.size()); }
    int connectionsAccepted() const { return m_connectionsAccepted; }
    // The most requests that were received but not yet fully answered at one time.
    int peakInFlight() const { return m_peakInFlight; }

Q_SIGNALS:
    void requestReceived(int index);

private:
    struct ResponsePlan;

    void onNewConnection();
    void onRequest(FakeHttpConnection *connection, const FakeHttpRequest &request);
    ResponsePlan planGenerate(const LlmDialect &dialect, const DialectRequest &request, RecordedRequest *record);
    static void drip(ResponsePlan *plan, int chunkDelayMs);
    void play(FakeHttpConnection *connection, std::shared_ptr<const ResponsePlan> plan);
    void writeParts(FakeHttpConnection *connection, std::shared_ptr<const ResponsePlan> plan, int next);
    void responseDone(FakeHttpConnection *connection);
    void appendToLog(int index);

    QTcpServer m_server;
    std::vector<std::unique_ptr<LlmDialect>> m_dialects;
    std::optional<FakeLlmScript> m_script;
    QList<RecordedRequest> m_requests;
    QFile m_log;
    QFile m_timing;
    QHash<FakeHttpConnection *, int> m_requestOf; // the request each connection is answering
    QSet<FakeHttpConnection *> m_inFlight;
    int m_peakInFlight = 0;
    CloseAfterAnswer m_closeAfterAnswer = CloseAfterAnswer::Off;
    int m_connectionsAccepted = 0;
};

} // namespace autocomp::test
