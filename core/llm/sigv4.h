#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

class QDateTime;
class QNetworkRequest;
class QUrl;

namespace autocomp {

// AWS Signature Version 4 for request headers (Bedrock's Converse API and any other non-S3 service).
class SigV4
{
public:
    struct Credentials
    {
        QString accessKeyId;
        QString secretAccessKey;
        QString sessionToken; // temporary credentials only; sent and signed as x-amz-security-token
    };

    // Adds host, x-amz-date, x-amz-security-token (with a session token) and Authorization to `request`.
    // Signs host, content-type and every x-amz-* header; the request must not change afterwards.
    static void signRequest(QNetworkRequest &request, const QByteArray &method, const QByteArray &body,
                            const Credentials &creds, const QString &region, const QString &service,
                            const QDateTime &nowUtc);

    // The pieces, public for tests. `headers` are (name, value) pairs as given; names are lower-cased, values
    // trimmed and runs of spaces collapsed, duplicates joined with ','.
    static QByteArray canonicalRequest(const QByteArray &method, const QUrl &url,
                                       const QList<QPair<QByteArray, QByteArray>> &headers,
                                       const QByteArray &payloadHash, QByteArray *signedHeaders);
    static QByteArray stringToSign(const QDateTime &nowUtc, const QString &region, const QString &service,
                                   const QByteArray &canonicalRequest);
    // Lower-case hex HMAC-SHA256 of stringToSign under the key derived from secret, date, region and service.
    static QByteArray signature(const QString &secret, const QDateTime &nowUtc, const QString &region,
                                const QString &service, const QByteArray &stringToSign);

    static QByteArray amzDate(const QDateTime &nowUtc); // 20150830T123600Z
    static QByteArray canonicalUri(const QUrl &url);
    static QByteArray canonicalQuery(const QUrl &url);
};

} // namespace autocomp
