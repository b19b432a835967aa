#include "fake_http_connection.h"

#include <QTimer>

#include <ctime>

#ifdef Q_OS_UNIX
#include <sys/socket.h>
#endif

namespace autocomp::test {

namespace {
constexpr qsizetype MaxHeaderBytes = 64 * 1024;
constexpr qsizetype MaxBodyBytes = 256 * 1024 * 1024;
} // namespace

FakeHttpConnection::FakeHttpConnection(QTcpSocket *socket, QObject *parent) : QObject(parent), m_socket(socket)
{
    socket->setParent(this);
    // No Nagle: the head and the body are separate writes, and a client's delayed ACK would hold the body.
    socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    connect(socket, &QTcpSocket::readyRead, this, &FakeHttpConnection::onReadyRead);
    connect(socket, &QTcpSocket::disconnected, this, [this] {
        if (!m_closed) {
            m_closed = true;
            Q_EMIT closed();
        }
        deleteLater();
    });
}

FakeHttpConnection::~FakeHttpConnection() = default;

QByteArray FakeHttpConnection::reasonPhrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 529: return "Overloaded";
    default: return "Status";
    }
}

void FakeHttpConnection::onReadyRead()
{
    if (!m_socket)
        return;
    if (m_buffer.isEmpty() && m_socket->bytesAvailable() > 0) {
        timespec ts{};
        ::clock_gettime(CLOCK_MONOTONIC, &ts);
        m_firstByteNs = qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    }
    m_buffer += m_socket->readAll();
    processBuffer();
}

void FakeHttpConnection::processBuffer()
{
    if (m_busy || m_closed || !m_socket)
        return;
    // RFC 9112 §2.2: ignore empty lines before a request line.
    while (m_buffer.startsWith("\r\n"))
        m_buffer.remove(0, 2);

    const qsizetype headerEnd = m_buffer.indexOf("\r\n\r\n");
    if (headerEnd < 0) {
        if (m_buffer.size() > MaxHeaderBytes)
            failAndClose(431, "request header section too large");
        return;
    }

    const QList<QByteArray> lines = m_buffer.left(headerEnd).split('\n');
    const QList<QByteArray> requestLine = lines.value(0).trimmed().split(' ');
    if (requestLine.size() != 3 || !requestLine.at(2).startsWith("HTTP/1.")) {
        failAndClose(400, "malformed request line");
        return;
    }

    FakeHttpRequest request;
    request.method = requestLine.at(0);
    request.version = requestLine.at(2);
    const QByteArray target = requestLine.at(1);
    const qsizetype queryStart = target.indexOf('?');
    request.path = QString::fromUtf8(queryStart < 0 ? target : target.left(queryStart));
    if (queryStart >= 0)
        request.query = QString::fromUtf8(target.mid(queryStart + 1));

    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray line = lines.at(i).trimmed();
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0) {
            failAndClose(400, "malformed header line");
            return;
        }
        request.headers.append({line.left(colon).trimmed(), line.mid(colon + 1).trimmed()});
    }

    if (!request.header("transfer-encoding").isEmpty()) {
        // Clients send Content-Length for in-memory bodies; chunked uploads are not needed by any test yet.
        failAndClose(501, "fake-llm-server: chunked request bodies are not supported");
        return;
    }
    qsizetype contentLength = 0;
    const QByteArray lengthHeader = request.header("content-length");
    if (!lengthHeader.isEmpty()) {
        bool ok = false;
        contentLength = lengthHeader.toLongLong(&ok);
        if (!ok || contentLength < 0) {
            failAndClose(400, "invalid Content-Length");
            return;
        }
        if (contentLength > MaxBodyBytes) {
            failAndClose(413, "request body too large");
            return;
        }
    }

    const qsizetype bodyStart = headerEnd + 4;
    if (m_buffer.size() - bodyStart < contentLength)
        return; // the rest of the body is still on its way

    request.body = m_buffer.mid(bodyStart, contentLength);
    m_buffer.remove(0, bodyStart + contentLength);
    request.firstByteNs = m_firstByteNs;
    if (!m_buffer.isEmpty()) { // the next request's first bytes came along
        timespec ts{};
        ::clock_gettime(CLOCK_MONOTONIC, &ts);
        m_firstByteNs = qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    }

    const QByteArray connectionHeader = request.header("connection").toLower();
    m_closeAfterResponse = connectionHeader.contains("close")
        || (request.version == "HTTP/1.0" && !connectionHeader.contains("keep-alive"));
    m_busy = true;
    Q_EMIT requestArrived(request);
}

void FakeHttpConnection::writeHead(int status, const HttpHeaders &headers)
{
    QByteArray head = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    for (const auto &[name, value] : headers)
        head += name + ": " + value + "\r\n";
    head += m_closeAfterResponse ? "Connection: close\r\n" : "Connection: keep-alive\r\n";
    head += "\r\n";
    writeRaw(head);
}

void FakeHttpConnection::writeRaw(const QByteArray &bytes)
{
    if (m_socket && !m_closed)
        m_socket->write(bytes);
}

qint64 FakeHttpConnection::unsentBytes() const { return m_socket && !m_closed ? m_socket->bytesToWrite() : 0; }

void FakeHttpConnection::writeChunk(const QByteArray &bytes)
{
    QByteArray framed;
    appendChunk(&framed, bytes);
    writeRaw(framed);
}

void FakeHttpConnection::appendChunk(QByteArray *out, const QByteArray &bytes)
{
    if (bytes.isEmpty())
        return; // an empty chunk would end the body
    *out += QByteArray::number(bytes.size(), 16) + "\r\n" + bytes + "\r\n";
}

void FakeHttpConnection::endChunked() { writeRaw("0\r\n\r\n"); }

void FakeHttpConnection::finishResponse()
{
    m_busy = false;
    if (!m_socket || m_closed)
        return;
    if (m_closeAfterResponse) {
        m_socket->disconnectFromHost();
        return;
    }
    QTimer::singleShot(0, this, &FakeHttpConnection::processBuffer);
}

void FakeHttpConnection::abort()
{
    m_busy = false;
    if (!m_socket || m_closed)
        return;
    m_socket->flush();
#ifdef Q_OS_UNIX
    // Linger 0 turns the close into a TCP RST, which is what a dropped upstream connection looks like.
    const linger noLinger{1, 0};
    ::setsockopt(int(m_socket->socketDescriptor()), SOL_SOCKET, SO_LINGER, &noLinger, sizeof noLinger);
#endif
    m_closed = true;
    Q_EMIT closed();
    m_socket->abort();
    deleteLater();
}

void FakeHttpConnection::close()
{
    m_busy = false;
    if (!m_socket || m_closed)
        return;
    m_closed = true;
    Q_EMIT closed();
    m_socket->disconnectFromHost();
    deleteLater();
}

void FakeHttpConnection::failAndClose(int status, const QByteArray &message)
{
    m_closeAfterResponse = true;
    m_busy = true;
    writeHead(status, {{"Content-Type", "text/plain"}, {"Content-Length", QByteArray::number(message.size())}});
    writeRaw(message);
    finishResponse();
}

} // namespace autocomp::test
