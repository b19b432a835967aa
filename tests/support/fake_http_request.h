#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>
#include <QString>

namespace autocomp::test {

using HttpHeaders = QList<QPair<QByteArray, QByteArray>>;

// Case-insensitive header lookup; empty when absent.
inline QByteArray headerValue(const HttpHeaders &headers, QByteArrayView name)
{
    for (const auto &[key, value] : headers) {
        if (QByteArrayView(key).compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

// One parsed HTTP/1.1 request as it arrived on the wire.
struct FakeHttpRequest
{
    QByteArray method;
    QString path; // without the query string
    QString query; // after '?', empty when absent
    QByteArray version;
    HttpHeaders headers; // in arrival order, names as sent
    QByteArray body;
    qint64 firstByteNs = 0; // CLOCK_MONOTONIC when the server read the request's first bytes

    QByteArray header(QByteArrayView name) const { return headerValue(headers, name); }
};

} // namespace autocomp::test
