#include "llm/http_client.h"

#include <QNetworkRequest>
#include <QSslSocket>
#include <QTcpSocket>
#include <QTimer>

namespace autocomp {

// One persistent connection: writes a request, parses the response as bytes arrive, then goes back to
// its pool (or closes, when either side said so).
class HttpConnection : public QObject
{
public:
    HttpConnection(HttpClient *client, const QString &poolKey, const QString &scheme, const QString &host, quint16 port);
    ~HttpConnection() override;

    void start(HttpExchange *exchange);
    // The exchange gives up (abort, timeout): the connection is in an unknown state and closes.
    void drop();
    bool isConnected() const { return m_connected; }
    const QString &poolKey() const { return m_poolKey; }
    int served() const { return m_served; }

private:
    enum class State { StatusLine, Headers, FixedBody, ChunkSize, ChunkData, ChunkEnd, Trailers, CloseBody, Idle };
    void onConnected();
    void onReadyRead();
    void onClosed(const QString &why);
    void parse();
    bool headComplete();
    void bodyBytes(QByteArray bytes);
    bool takeBody();
    void responseDone();
    void protocolError(const QString &what);

    HttpClient *m_client;
    QString m_poolKey;
    QString m_host;
    quint16 m_port;
    QAbstractSocket *m_socket;
    bool m_connected = false;
    QPointer<HttpExchange> m_exchange;
    State m_state = State::Idle;
    QByteArray m_in;
    qint64 m_remaining = 0;
    qint64 m_toWrite = 0;
    bool m_keepAlive = true;
    bool m_gotBytes = false; // of the current response
    int m_served = 0;
    bool m_closing = false;
};

namespace {

constexpr qsizetype MaxHeadBytes = 256 * 1024;

QByteArray lower(QByteArray text)
{
    return text.toLower();
}

} // namespace

HttpConnection::HttpConnection(HttpClient *client, const QString &poolKey, const QString &scheme, const QString &host, quint16 port)
    : QObject(client), m_client(client), m_poolKey(poolKey), m_host(host), m_port(port)
{
    if (scheme == QLatin1String("https")) {
        auto *ssl = new QSslSocket(this);
        m_socket = ssl;
        connect(ssl, &QSslSocket::encrypted, this, [this] { onConnected(); });
        ssl->connectToHostEncrypted(host, port);
    } else {
        m_socket = new QTcpSocket(this);
        connect(m_socket, &QAbstractSocket::connected, this, [this] { onConnected(); });
        m_socket->connectToHost(host, port);
    }
    m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    connect(m_socket, &QIODevice::readyRead, this, [this] { onReadyRead(); });
    connect(m_socket, &QIODevice::bytesWritten, this, [this](qint64 bytes) {
        if (m_toWrite <= 0)
            return;
        m_toWrite -= bytes;
        if (m_exchange) {
            m_exchange->touch();
            if (m_toWrite <= 0)
                Q_EMIT m_exchange->requestSent();
        }
    });
    connect(m_socket, &QAbstractSocket::disconnected, this, [this] { onClosed(QStringLiteral("the server closed the connection")); });
    connect(m_socket, &QAbstractSocket::errorOccurred, this, [this](QAbstractSocket::SocketError) { onClosed(m_socket->errorString()); });
}

HttpConnection::~HttpConnection()
{
    m_closing = true;
    m_socket->disconnect(this);
    m_socket->abort();
}

void HttpConnection::start(HttpExchange *exchange)
{
    m_exchange = exchange;
    exchange->m_connection = this;
    m_state = State::StatusLine;
    m_in.clear();
    m_gotBytes = false;
    m_keepAlive = true;
    if (m_connected) {
        m_toWrite = exchange->m_head.size() + exchange->m_payload.size();
        m_socket->write(exchange->m_head);
        m_socket->write(exchange->m_payload);
        exchange->touch();
    } else {
        Q_EMIT exchange->connecting();
    }
}

void HttpConnection::onConnected()
{
    m_connected = true;
    if (!m_exchange)
        return;
    m_toWrite = m_exchange->m_head.size() + m_exchange->m_payload.size();
    m_socket->write(m_exchange->m_head);
    m_socket->write(m_exchange->m_payload);
    m_exchange->touch();
}

void HttpConnection::drop()
{
    m_exchange = nullptr;
    m_closing = true;
    m_client->connectionGone(this);
}

void HttpConnection::onReadyRead()
{
    m_in += m_socket->readAll();
    if (!m_exchange) {
        // Bytes on an idle connection: nothing may come unasked, so the connection is not trusted again.
        if (!m_in.isEmpty())
            drop();
        return;
    }
    m_gotBytes = m_gotBytes || !m_in.isEmpty();
    m_exchange->touch();
    parse();
}

void HttpConnection::onClosed(const QString &why)
{
    if (m_closing)
        return;
    m_closing = true;
    QPointer<HttpExchange> exchange = m_exchange;
    m_exchange = nullptr;
    if (exchange && !exchange->m_finished) {
        // Bytes still in the socket's buffer belong to the response.
        if (m_socket->bytesAvailable() > 0) {
            m_exchange = exchange;
            m_in += m_socket->readAll();
            parse();
            m_exchange = nullptr;
        }
        if (exchange && !exchange->m_finished) {
            if (m_state == State::CloseBody) {
                exchange->complete();
            } else if (!m_gotBytes && m_served > 0 && !exchange->m_resent) {
                // A pooled connection the server had already closed: the request never reached it.
                exchange->m_resent = true;
                exchange->m_connection = nullptr;
                m_client->connectionGone(this);
                m_client->resend(exchange);
                return;
            } else if (!m_connected) {
                exchange->fail(HttpExchange::Error::ConnectionFailed,
                               QStringLiteral("cannot connect to %1:%2: %3").arg(m_host).arg(m_port).arg(why));
            } else {
                exchange->fail(HttpExchange::Error::ConnectionLost,
                               QStringLiteral("connection to %1:%2 lost before the response was complete: %3").arg(m_host).arg(m_port).arg(why));
            }
        }
    }
    m_client->connectionGone(this);
}

void HttpConnection::protocolError(const QString &what)
{
    QPointer<HttpExchange> exchange = m_exchange;
    m_exchange = nullptr;
    m_closing = true;
    if (exchange)
        exchange->fail(HttpExchange::Error::Protocol, QStringLiteral("%1:%2 sent a malformed HTTP response: %3").arg(m_host).arg(m_port).arg(what));
    m_client->connectionGone(this);
}

bool HttpConnection::headComplete()
{
    // Status line and headers, one CRLF-ended line at a time (a bare LF is accepted).
    while (m_state == State::StatusLine || m_state == State::Headers) {
        const qsizetype eol = m_in.indexOf('\n');
        if (eol < 0) {
            if (m_in.size() > MaxHeadBytes)
                protocolError(QStringLiteral("response head larger than %1 KiB").arg(MaxHeadBytes / 1024));
            return false;
        }
        QByteArray line = m_in.left(eol);
        m_in.remove(0, eol + 1);
        if (line.endsWith('\r'))
            line.chop(1);
        HttpExchange *exchange = m_exchange;
        if (m_state == State::StatusLine) {
            if (line.isEmpty())
                continue; // stray CRLF between responses
            const QList<QByteArray> parts = line.split(' ');
            bool ok = false;
            const int status = parts.value(1).toInt(&ok);
            if (!line.startsWith("HTTP/1.") || !ok || status < 100 || status > 999) {
                protocolError(QStringLiteral("bad status line '%1'").arg(QString::fromLatin1(line.left(80))));
                return false;
            }
            exchange->m_status = status;
            exchange->m_headers.clear();
            m_keepAlive = line.startsWith("HTTP/1.1");
            m_state = State::Headers;
            continue;
        }
        if (!line.isEmpty()) {
            const qsizetype colon = line.indexOf(':');
            if (colon <= 0) {
                protocolError(QStringLiteral("bad header line '%1'").arg(QString::fromLatin1(line.left(80))));
                return false;
            }
            exchange->m_headers.append({lower(line.left(colon).trimmed()), line.mid(colon + 1).trimmed()});
            continue;
        }
        // The end of the head.
        const int status = exchange->m_status;
        if (status >= 100 && status < 200) {
            m_state = State::StatusLine; // 100 Continue, 103 Early Hints: the real response follows
            continue;
        }
        const QByteArray connection = lower(exchange->header("connection"));
        if (connection.contains("close"))
            m_keepAlive = false;
        else if (connection.contains("keep-alive"))
            m_keepAlive = true;
        const QByteArray encoding = lower(exchange->header("transfer-encoding"));
        const QByteArray length = exchange->header("content-length");
        if (status == 204 || status == 304) {
            m_state = State::Idle;
            m_remaining = 0;
        } else if (encoding.contains("chunked")) {
            m_state = State::ChunkSize;
        } else if (!length.isEmpty()) {
            bool ok = false;
            m_remaining = length.toLongLong(&ok);
            if (!ok || m_remaining < 0) {
                protocolError(QStringLiteral("bad Content-Length '%1'").arg(QString::fromLatin1(length)));
                return false;
            }
            m_state = State::FixedBody;
        } else {
            m_state = State::CloseBody;
            m_keepAlive = false;
        }
    }
    return true;
}

bool HttpConnection::takeBody()
{
    // Up to m_remaining bytes of the buffer belong to the body (the rest is framing or the next response).
    const qsizetype take = qsizetype(qMin<qint64>(m_remaining, m_in.size()));
    if (take == m_in.size()) {
        bodyBytes(std::exchange(m_in, {}));
    } else {
        bodyBytes(m_in.left(take));
        m_in.remove(0, take);
    }
    m_remaining -= take;
    return take > 0;
}

void HttpConnection::bodyBytes(QByteArray bytes)
{
    if (bytes.isEmpty())
        return;
    if (m_exchange->m_body.isEmpty())
        m_exchange->m_body = std::move(bytes);
    else
        m_exchange->m_body += bytes;
}

void HttpConnection::parse()
{
    if (!m_exchange)
        return;
    if (!headComplete())
        return;
    QPointer<HttpExchange> exchange = m_exchange;
    bool body = false;
    bool done = m_state == State::Idle;
    while (!done && !m_in.isEmpty()) {
        switch (m_state) {
        case State::FixedBody: {
            body = takeBody() || body;
            break;
        }
        case State::ChunkSize: {
            const qsizetype eol = m_in.indexOf('\n');
            if (eol < 0) {
                if (m_in.size() > 1024) {
                    protocolError(QStringLiteral("chunk size line too long"));
                    return;
                }
                goto wait;
            }
            QByteArray line = m_in.left(eol);
            m_in.remove(0, eol + 1);
            const qsizetype semicolon = line.indexOf(';'); // chunk extensions are ignored
            if (semicolon >= 0)
                line.truncate(semicolon);
            bool ok = false;
            m_remaining = line.trimmed().toLongLong(&ok, 16);
            if (!ok || m_remaining < 0) {
                protocolError(QStringLiteral("bad chunk size '%1'").arg(QString::fromLatin1(line.left(40))));
                return;
            }
            m_state = m_remaining == 0 ? State::Trailers : State::ChunkData;
            break;
        }
        case State::ChunkData: {
            body = takeBody() || body;
            if (m_remaining == 0)
                m_state = State::ChunkEnd;
            break;
        }
        case State::ChunkEnd: {
            const qsizetype eol = m_in.indexOf('\n');
            if (eol < 0) {
                if (m_in.size() > 2) {
                    protocolError(QStringLiteral("chunk not followed by CRLF"));
                    return;
                }
                goto wait;
            }
            m_in.remove(0, eol + 1);
            m_state = State::ChunkSize;
            break;
        }
        case State::Trailers: {
            const qsizetype eol = m_in.indexOf('\n');
            if (eol < 0)
                goto wait;
            const bool last = eol == 0 || (eol == 1 && m_in.at(0) == '\r');
            m_in.remove(0, eol + 1);
            if (last)
                done = true;
            break;
        }
        case State::CloseBody:
            body = true;
            bodyBytes(std::exchange(m_in, {}));
            break;
        default:
            break;
        }
        if (m_state == State::FixedBody && m_remaining == 0)
            done = true;
    }
    if (m_state == State::FixedBody && m_remaining == 0)
        done = true;
wait:
    if (body && exchange)
        Q_EMIT exchange->readyRead();
    if (done && exchange && m_exchange == exchange)
        responseDone();
}

void HttpConnection::responseDone()
{
    HttpExchange *exchange = m_exchange;
    m_exchange = nullptr;
    m_state = State::Idle;
    ++m_served;
    const bool reuse = m_keepAlive && m_in.isEmpty();
    exchange->m_connection = nullptr;
    if (reuse)
        m_client->connectionFree(this);
    else {
        m_closing = true;
        m_client->connectionGone(this);
    }
    exchange->complete();
}

HttpExchange::HttpExchange(HttpClient *client) : QObject(client), m_client(client) {}

HttpExchange::~HttpExchange()
{
    if (!m_finished) {
        m_finished = true;
        if (m_connection)
            m_connection->drop();
        else
            m_client->withdraw(this);
    }
}

QByteArray HttpExchange::header(QByteArrayView name) const
{
    for (const auto &[key, value] : m_headers)
        if (key.size() == name.size() && key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    return {};
}

void HttpExchange::touch()
{
    if (m_idleTimer)
        m_idleTimer->start();
}

void HttpExchange::abort()
{
    if (m_finished)
        return;
    fail(Error::Cancelled, QStringLiteral("cancelled"));
}

void HttpExchange::fail(Error error, const QString &message)
{
    if (m_finished)
        return;
    m_error = error;
    m_errorString = message;
    if (m_connection) {
        HttpConnection *connection = m_connection;
        m_connection = nullptr;
        connection->drop();
    } else {
        m_client->withdraw(this);
    }
    complete();
}

void HttpExchange::complete()
{
    if (m_finished)
        return;
    m_finished = true;
    if (m_idleTimer)
        m_idleTimer->stop();
    Q_EMIT finished();
}

HttpClient::HttpClient(QObject *parent) : QObject(parent) {}

HttpClient::~HttpClient()
{
    // Exchanges and connections are children; unfinished exchanges must not call back into the pools.
    for (QObject *child : children())
        if (auto *exchange = qobject_cast<HttpExchange *>(child))
            exchange->m_finished = true;
    m_pools.clear();
}

int HttpClient::openConnections() const
{
    int n = 0;
    for (const Pool &pool : m_pools)
        n += int(pool.all.size());
    return n;
}

HttpExchange *HttpClient::post(const QNetworkRequest &request, const QByteArray &body, int idleTimeoutMs)
{
    auto *exchange = new HttpExchange(this);
    const QUrl url = request.url();
    const QString scheme = url.scheme().toLower();
    const quint16 port = quint16(url.port(scheme == QLatin1String("https") ? 443 : 80));
    exchange->m_poolKey = QStringLiteral("%1://%2:%3").arg(scheme, url.host().toLower()).arg(port);
    exchange->m_payload = body;
    exchange->m_idleTimeoutMs = idleTimeoutMs;
    if (idleTimeoutMs > 0) {
        exchange->m_idleTimer = new QTimer(exchange);
        exchange->m_idleTimer->setSingleShot(true);
        exchange->m_idleTimer->setInterval(idleTimeoutMs);
        connect(exchange->m_idleTimer, &QTimer::timeout, exchange, [exchange, idleTimeoutMs] {
            exchange->fail(HttpExchange::Error::Timeout, QStringLiteral("no data for %1 s").arg(idleTimeoutMs / 1000.0));
        });
        exchange->m_idleTimer->start();
    }

    QByteArray target = url.toEncoded(QUrl::RemoveScheme | QUrl::RemoveAuthority | QUrl::RemoveFragment | QUrl::FullyEncoded);
    if (!target.startsWith('/'))
        target.prepend('/');
    QByteArray head = "POST " + target + " HTTP/1.1\r\n";
    bool hasHost = false;
    for (const QByteArray &name : request.rawHeaderList()) {
        const QByteArray lowerName = name.toLower();
        if (lowerName == "content-length" || lowerName == "connection")
            continue;
        hasHost = hasHost || lowerName == "host";
        head += name + ": " + request.rawHeader(name) + "\r\n";
    }
    if (!hasHost) {
        const bool defaultPort = url.port() < 0 || (scheme == QLatin1String("https") ? port == 443 : port == 80);
        head += "Host: " + url.host(QUrl::FullyEncoded).toLatin1() + (defaultPort ? QByteArray() : ':' + QByteArray::number(port)) + "\r\n";
    }
    head += "Content-Length: " + QByteArray::number(body.size()) + "\r\nConnection: keep-alive\r\n\r\n";
    exchange->m_head = head;

    if (scheme != QLatin1String("http") && scheme != QLatin1String("https")) {
        QMetaObject::invokeMethod(
            exchange,
            [exchange, scheme] { exchange->fail(HttpExchange::Error::ConnectionFailed, QStringLiteral("unsupported URL scheme '%1'").arg(scheme)); },
            Qt::QueuedConnection);
        return exchange;
    }
    if (scheme == QLatin1String("https") && !QSslSocket::supportsSsl()) {
        QMetaObject::invokeMethod(
            exchange, [exchange] { exchange->fail(HttpExchange::Error::ConnectionFailed, QStringLiteral("TLS is not available (no TLS backend)")); },
            Qt::QueuedConnection);
        return exchange;
    }
    Pool &pool = m_pools[exchange->m_poolKey];
    if (pool.host.isEmpty()) {
        pool.scheme = scheme;
        pool.host = url.host();
        pool.port = port;
    }
    pool.waiting.append(exchange);
    dispatchLater(exchange->m_poolKey); // from the event loop, so a caller connects to the exchange's signals first
    return exchange;
}

void HttpClient::dispatch(Pool &pool)
{
    while (!pool.waiting.isEmpty()) {
        HttpConnection *connection = nullptr;
        if (!pool.idle.isEmpty()) {
            connection = pool.idle.takeLast(); // the most recently used is the least likely to have been closed
        } else if (pool.all.size() < m_perHostLimit) {
            const QString key = pool.waiting.first()->m_poolKey;
            connection = new HttpConnection(this, key, pool.scheme, pool.host, pool.port);
            pool.all.append(connection);
        } else {
            return;
        }
        connection->start(pool.waiting.takeFirst());
    }
}

void HttpClient::dispatchLater(const QString &key)
{
    QMetaObject::invokeMethod(
        this,
        [this, key] {
            if (auto pool = m_pools.find(key); pool != m_pools.end())
                dispatch(*pool);
        },
        Qt::QueuedConnection);
}

void HttpClient::connectionFree(HttpConnection *connection)
{
    auto pool = m_pools.find(connection->poolKey());
    if (pool == m_pools.end() || !pool->all.contains(connection))
        return;
    pool->idle.append(connection);
    if (!pool->waiting.isEmpty())
        dispatchLater(pool.key());
}

void HttpClient::connectionGone(HttpConnection *connection)
{
    auto pool = m_pools.find(connection->poolKey());
    if (pool == m_pools.end() || pool->all.removeAll(connection) == 0)
        return;
    pool->idle.removeAll(connection);
    connection->deleteLater();
    if (!pool->waiting.isEmpty())
        dispatchLater(pool.key());
}

void HttpClient::withdraw(HttpExchange *exchange)
{
    if (auto it = m_pools.find(exchange->m_poolKey); it != m_pools.end())
        it->waiting.removeAll(exchange);
}

void HttpClient::resend(HttpExchange *exchange)
{
    if (auto it = m_pools.find(exchange->m_poolKey); it != m_pools.end()) {
        it->waiting.prepend(exchange);
        dispatch(*it);
    }
}

} // namespace autocomp
