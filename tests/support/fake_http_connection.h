#pragma once

#include "fake_http_request.h"

#include <QObject>
#include <QPointer>
#include <QTcpSocket>

namespace autocomp::test {

// One client connection: parses HTTP/1.1 requests (Content-Length bodies, keep-alive, data arriving in
// any number of TCP segments) and writes responses. Requests are answered one at a time in arrival order;
// bytes of a following request are buffered until the current response is finished.
class FakeHttpConnection : public QObject
{
    Q_OBJECT
public:
    explicit FakeHttpConnection(QTcpSocket *socket, QObject *parent = nullptr);
    ~FakeHttpConnection() override;

    bool isBusy() const { return m_busy; }

    // Response writing, used by the server while a request is being answered.
    void writeHead(int status, const HttpHeaders &headers);
    void writeRaw(const QByteArray &bytes);
    // Bytes written but not yet handed to the kernel.
    qint64 unsentBytes() const;
    void writeChunk(const QByteArray &bytes); // Transfer-Encoding: chunked framing
    static void appendChunk(QByteArray *out, const QByteArray &bytes); // the same framing, into a buffer
    void endChunked();
    // The response is complete: serve the next buffered request, or close when the client asked for it.
    void finishResponse();
    // Drops the connection without a proper end (a mid-stream reset as the client sees it).
    void abort();
    // Closes the connection in order (FIN) with nothing more written.
    void close();

    static QByteArray reasonPhrase(int status);
    // Close the connection once the current response is finished (before writeHead: announced as such).
    void setCloseAfterResponse(bool close) { m_closeAfterResponse = close; }

Q_SIGNALS:
    void requestArrived(const autocomp::test::FakeHttpRequest &request);
    void closed();

private:
    void onReadyRead();
    void processBuffer();
    void failAndClose(int status, const QByteArray &message);

    QPointer<QTcpSocket> m_socket;
    QByteArray m_buffer;
    qint64 m_firstByteNs = 0; // of the request being read
    bool m_busy = false;
    bool m_closeAfterResponse = false;
    bool m_closed = false;
};

} // namespace autocomp::test
