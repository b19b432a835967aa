// HttpClient against a scripted server that writes raw bytes: framing (Content-Length, chunked cut at
// odd places, close-delimited, 100 Continue), connection reuse and a pooled connection the server had
// closed, and each failure kind (refused, lost mid-body, malformed, cancelled, idle timeout).
#include "llm/http_client.h"

#include <QNetworkRequest>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QTimer>

#include <functional>

using namespace autocomp;

namespace {

// Answers each request (read up to the end of its body) with what the handler returns; the handler gets
// the socket to write to and the request text.
class ScriptedServer : public QObject
{
public:
    std::function<void(QTcpSocket *, const QByteArray &)> handler;
    int connections = 0;
    QList<QByteArray> requests;

    ScriptedServer()
    {
        QVERIFY(m_server.listen(QHostAddress::LocalHost));
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection()) {
                ++connections;
                auto *buffer = new QByteArray;
                connect(socket, &QObject::destroyed, this, [buffer] { delete buffer; });
                connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
                connect(socket, &QTcpSocket::readyRead, this, [this, socket, buffer] {
                    *buffer += socket->readAll();
                    const qsizetype end = buffer->indexOf("\r\n\r\n");
                    if (end < 0)
                        return;
                    const QByteArray head = buffer->left(end);
                    const qsizetype lengthAt = head.toLower().indexOf("content-length:");
                    const qsizetype length = lengthAt < 0 ? 0 : head.mid(lengthAt + 15, head.indexOf('\r', lengthAt) - lengthAt - 15).trimmed().toLongLong();
                    if (buffer->size() < end + 4 + length)
                        return;
                    const QByteArray request = buffer->left(end + 4 + length);
                    buffer->remove(0, end + 4 + length);
                    requests << request;
                    handler(socket, request);
                });
            }
        });
    }
    QUrl url(const QString &path = QStringLiteral("/v1/x")) const
    {
        return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(m_server.serverPort()).arg(path));
    }
    void close() { m_server.close(); }

private:
    QTcpServer m_server;
};

struct Outcome {
    int status = 0;
    QByteArray body;
    HttpExchange::Error error = HttpExchange::Error::None;
    QString errorString;
    int readyReads = 0;
    bool connecting = false;
    bool sent = false;
};

Outcome exchange(HttpClient &client, const QUrl &url, const QByteArray &body = "{}", int idleMs = 5000,
                 const std::function<void(HttpExchange *)> &whileRunning = {})
{
    QNetworkRequest request(url);
    request.setRawHeader("Content-Type", "application/json");
    HttpExchange *x = client.post(request, body, idleMs);
    Outcome out;
    QObject::connect(x, &HttpExchange::connecting, [&] { out.connecting = true; });
    QObject::connect(x, &HttpExchange::requestSent, [&] { out.sent = true; });
    QObject::connect(x, &HttpExchange::readyRead, [&] {
        ++out.readyReads;
        out.body += x->readAll();
    });
    QSignalSpy finished(x, &HttpExchange::finished);
    if (whileRunning)
        whileRunning(x);
    if (finished.isEmpty() && !finished.wait(10000))
        qWarning("exchange did not finish");
    out.body += x->readAll();
    out.status = x->status();
    out.error = x->error();
    out.errorString = x->errorString();
    delete x;
    return out;
}

} // namespace

class TestHttpClient : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void contentLengthAndReuse();
    void chunkedCutAnywhere();
    void closeDelimitedAndContinue();
    void serverClosedPooledConnection();
    void failures();
    void abortAndIdleTimeout();
};

void TestHttpClient::contentLengthAndReuse()
{
    ScriptedServer server;
    server.handler = [](QTcpSocket *socket, const QByteArray &) {
        socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Test: a b\r\nContent-Length: 11\r\n\r\n{\"ok\":true}");
    };
    HttpClient client;
    const Outcome first = exchange(client, server.url(QStringLiteral("/v1/models/a:b?alt=sse")), "{\"q\":1}");
    QCOMPARE(first.error, HttpExchange::Error::None);
    QCOMPARE(first.status, 200);
    QCOMPARE(first.body, QByteArray("{\"ok\":true}"));
    QVERIFY(first.connecting);
    QVERIFY(first.sent);
    // The request as sent: target with its query, Host with the port, our Content-Length.
    const QByteArray request = server.requests.value(0);
    QVERIFY2(request.startsWith("POST /v1/models/a:b?alt=sse HTTP/1.1\r\n"), request.constData());
    QVERIFY2(request.contains(QByteArray("Host: 127.0.0.1:" + QByteArray::number(server.url().port()) + "\r\n")), request.constData());
    QVERIFY(request.contains("Content-Length: 7\r\n"));
    QVERIFY(request.endsWith("\r\n\r\n{\"q\":1}"));
    // The second request goes over the same connection, without connecting again.
    const Outcome second = exchange(client, server.url());
    QCOMPARE(second.status, 200);
    QVERIFY(!second.connecting);
    QCOMPARE(server.connections, 1);
    QCOMPARE(client.openConnections(), 1);
}

void TestHttpClient::chunkedCutAnywhere()
{
    // The body in chunks, the whole response written a few bytes at a time: every cut place is met.
    const QByteArray response = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/event-stream\r\n\r\n"
                                "5\r\nhello\r\n1;ext=1\r\n,\r\n6\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n";
    for (const int step : {1, 2, 3, 7, 1000}) {
        ScriptedServer server;
        server.handler = [&response, step](QTcpSocket *socket, const QByteArray &) {
            auto *pos = new int(0);
            auto *timer = new QTimer(socket);
            QObject::connect(timer, &QTimer::timeout, socket, [socket, timer, pos, step, &response] {
                socket->write(response.mid(*pos, step));
                socket->flush();
                *pos += step;
                if (*pos >= response.size()) {
                    timer->stop();
                    delete pos;
                }
            });
            timer->start(1);
        };
        HttpClient client;
        const Outcome out = exchange(client, server.url());
        QCOMPARE(out.error, HttpExchange::Error::None);
        QCOMPARE(out.body, QByteArray("hello, world"));
        QVERIFY(out.readyReads >= 1);
        // The connection stays usable after a chunked body.
        QCOMPARE(client.openConnections(), 1);
    }
}

void TestHttpClient::closeDelimitedAndContinue()
{
    ScriptedServer server;
    server.handler = [](QTcpSocket *socket, const QByteArray &) {
        socket->write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"all\":\"until close\"}");
        socket->disconnectFromHost();
    };
    HttpClient client;
    const Outcome out = exchange(client, server.url());
    QCOMPARE(out.error, HttpExchange::Error::None);
    QCOMPARE(out.status, 200);
    QCOMPARE(out.body, QByteArray("{\"all\":\"until close\"}"));
}

void TestHttpClient::serverClosedPooledConnection()
{
    // A pooled connection the server drops just as the next request reaches it (a keep-alive timeout
    // racing the request): that request is sent again on a new connection, once, without an error.
    ScriptedServer server;
    QHash<QTcpSocket *, int> served;
    server.handler = [&served](QTcpSocket *socket, const QByteArray &) {
        if (served[socket]++ > 0) {
            socket->abort();
            return;
        }
        socket->write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    };
    HttpClient client;
    QCOMPARE(exchange(client, server.url()).status, 200);
    const Outcome again = exchange(client, server.url());
    QCOMPARE(again.error, HttpExchange::Error::None);
    QCOMPARE(again.body, QByteArray("ok"));
    QCOMPARE(server.connections, 2);
    QCOMPARE(server.requests.size(), 3);


    // Connection: close from the server: the connection is not pooled.
    server.handler = [](QTcpSocket *socket, const QByteArray &) {
        socket->write("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
        socket->disconnectFromHost();
    };
    HttpClient closing;
    QCOMPARE(exchange(closing, server.url()).body, QByteArray("ok"));
    QTest::qWait(20);
    QCOMPARE(closing.openConnections(), 0);
}

void TestHttpClient::failures()
{
    HttpClient client;
    {
        // Nothing listens on the port any more.
        ScriptedServer gone;
        const QUrl url = gone.url();
        gone.close();
        const Outcome out = exchange(client, url);
        QCOMPARE(out.error, HttpExchange::Error::ConnectionFailed);
        QVERIFY2(out.errorString.contains(QStringLiteral("cannot connect to 127.0.0.1")), qPrintable(out.errorString));
    }
    {
        // Half the announced body, then the connection drops.
        ScriptedServer server;
        server.handler = [](QTcpSocket *socket, const QByteArray &) {
            socket->write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
            socket->flush();
            socket->abort();
        };
        const Outcome out = exchange(client, server.url());
        QCOMPARE(out.error, HttpExchange::Error::ConnectionLost);
        QCOMPARE(out.body, QByteArray("partial")); // what arrived is still readable
        QVERIFY2(out.errorString.contains(QStringLiteral("before the response was complete")), qPrintable(out.errorString));
    }
    for (const QByteArray &bad : {QByteArray("SMTP ready\r\n\r\n"), QByteArray("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n"),
                                  QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")}) {
        ScriptedServer server;
        server.handler = [bad](QTcpSocket *socket, const QByteArray &) { socket->write(bad); };
        const Outcome out = exchange(client, server.url());
        QCOMPARE(out.error, HttpExchange::Error::Protocol);
        QVERIFY2(out.errorString.contains(QStringLiteral("malformed HTTP response")), qPrintable(out.errorString));
    }
    const Outcome scheme = exchange(client, QUrl(QStringLiteral("ftp://127.0.0.1/x")));
    QCOMPARE(scheme.error, HttpExchange::Error::ConnectionFailed);
    QVERIFY(scheme.errorString.contains(QStringLiteral("ftp")));
}

void TestHttpClient::abortAndIdleTimeout()
{
    ScriptedServer server;
    server.handler = [](QTcpSocket *socket, const QByteArray &) {
        socket->write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"); // and never the rest
    };
    HttpClient client;
    const Outcome idle = exchange(client, server.url(), "{}", 300);
    QCOMPARE(idle.error, HttpExchange::Error::Timeout);
    QCOMPARE(idle.body, QByteArray("abc"));

    bool finishedInsideAbort = false;
    const Outcome cancelled = exchange(client, server.url(), "{}", 0, [&](HttpExchange *x) {
        QObject::connect(x, &HttpExchange::readyRead, x, [x, &finishedInsideAbort] {
            x->abort();
            finishedInsideAbort = x->isFinished();
        });
    });
    QCOMPARE(cancelled.error, HttpExchange::Error::Cancelled);
    QVERIFY(finishedInsideAbort);
    // Neither broken connection is offered again.
    QTest::qWait(20);
    QCOMPARE(client.openConnections(), 0);
}

QTEST_GUILESS_MAIN(TestHttpClient)
#include "tst_http_client.moc"
