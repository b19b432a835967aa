#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>

class QAbstractSocket;
class QNetworkRequest;
class QTimer;

namespace autocomp {

class HttpClient;
class HttpConnection;

// One HTTP/1.1 request and its response, read as it arrives. Lives on the client's thread; delete it
// (deleteLater) once finished() was handled.
class HttpExchange : public QObject
{
    Q_OBJECT
public:
    enum class Error {
        None,
        Cancelled,        // abort()
        Timeout,          // no bytes in either direction for the idle timeout
        ConnectionFailed, // no connection (refused, unknown host, TLS handshake)
        ConnectionLost,   // the connection broke before the response was complete
        Protocol,         // the server's bytes are not HTTP/1.x
    };
    Q_ENUM(Error)

    ~HttpExchange() override;

    int status() const { return m_status; }
    // A response header, matched without regard to case; empty when absent.
    QByteArray header(QByteArrayView name) const;
    // The body bytes that arrived since the last call.
    QByteArray readAll() { return std::exchange(m_body, {}); }
    Error error() const { return m_error; }
    QString errorString() const { return m_errorString; }
    bool isFinished() const { return m_finished; }
    // Ends the exchange now with Error::Cancelled; finished() is emitted before this returns.
    void abort();

Q_SIGNALS:
    void connecting();  // a new connection is being opened for this request (a pooled one is not)
    void requestSent(); // the whole request was handed to the connection
    void readyRead();   // body bytes arrived
    void finished();

private:
    friend class HttpClient;
    friend class HttpConnection;
    explicit HttpExchange(HttpClient *client);
    void fail(Error error, const QString &message);
    void complete();
    void touch(); // bytes moved: the idle timeout starts again

    HttpClient *m_client;
    QString m_poolKey;
    QByteArray m_head; // request line and headers
    QByteArray m_payload;
    int m_idleTimeoutMs = 0;
    QTimer *m_idleTimer = nullptr;
    QPointer<HttpConnection> m_connection;
    bool m_resent = false; // sent again once after a pooled connection turned out to be closed
    int m_status = 0;
    QList<std::pair<QByteArray, QByteArray>> m_headers; // names in lower case
    QByteArray m_body;
    Error m_error = Error::None;
    QString m_errorString;
    bool m_finished = false;
};

// A small HTTP/1.1 client for the LLM providers' JSON and server-sent-event APIs: persistent connections
// pooled per scheme, host and port, plain or TLS, requests and responses read and written on the
// caller's thread, Content-Length, chunked and close-delimited bodies. It does what QNetworkAccessManager
// does for these APIs without its worker thread and per-chunk hand-over between threads, which cost more
// than the whole rest of a streamed request (tests/bench/llm_client).
class HttpClient : public QObject
{
    Q_OBJECT
public:
    explicit HttpClient(QObject *parent = nullptr);
    ~HttpClient() override;

    // The URL and raw headers of request (Host, Content-Length and Connection are filled in unless set).
    // The exchange is a child of the client. idleTimeoutMs 0: no idle timeout.
    HttpExchange *post(const QNetworkRequest &request, const QByteArray &body, int idleTimeoutMs);
    void setMaxConnectionsPerHost(int limit) { m_perHostLimit = qMax(1, limit); }
    int openConnections() const;

private:
    friend class HttpExchange;
    friend class HttpConnection;
    struct Pool {
        QString scheme;
        QString host;
        quint16 port = 0;
        QList<HttpConnection *> idle;
        QList<HttpConnection *> all;
        QList<HttpExchange *> waiting;
    };
    void dispatch(Pool &pool);
    void dispatchLater(const QString &key);
    void connectionFree(HttpConnection *connection);
    void connectionGone(HttpConnection *connection);
    void withdraw(HttpExchange *exchange);
    void resend(HttpExchange *exchange);

    QHash<QString, Pool> m_pools;
    int m_perHostLimit = 64;
};

} // namespace autocomp
