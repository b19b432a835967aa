#include "llm/sigv4.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QMessageAuthenticationCode>
#include <QNetworkRequest>
#include <QUrl>

#include <algorithm>

namespace autocomp {

namespace {

QByteArray sha256Hex(const QByteArray &data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex();
}

QByteArray hmac(const QByteArray &key, const QByteArray &message)
{
    return QMessageAuthenticationCode::hash(message, key, QCryptographicHash::Sha256);
}

// RFC 3986 unreserved characters stay, everything else becomes %XX with upper-case hex: AWS's UriEncode.
QByteArray uriEncode(const QByteArray &bytes) { return bytes.toPercentEncoding(); }

QByteArray scope(const QDateTime &nowUtc, const QString &region, const QString &service)
{
    return nowUtc.toUTC().toString(QStringLiteral("yyyyMMdd")).toLatin1() + '/' + region.toUtf8() + '/'
        + service.toUtf8() + "/aws4_request";
}

QByteArray hostHeader(const QUrl &url)
{
    QByteArray host = url.host(QUrl::FullyEncoded).toLatin1();
    if (url.port() != -1)
        host += ':' + QByteArray::number(url.port());
    return host;
}

} // namespace

QByteArray SigV4::amzDate(const QDateTime &nowUtc)
{
    return nowUtc.toUTC().toString(QStringLiteral("yyyyMMdd'T'HHmmss'Z'")).toLatin1();
}

QByteArray SigV4::canonicalUri(const QUrl &url)
{
    // Each segment is encoded once more than it appears in the URL. Delimiters the caller percent-encoded
    // (Bedrock model ids: ':' as %3A, ARNs: '/' as %2F) stay encoded in PrettyDecoded form and so reach the
    // canonical form as %253A / %252F, which is what the service computes from the wire. Characters QUrl must
    // encode anyway (spaces, non-ASCII) are taken raw, as the published test suite writes them.
    const QString path = url.path(QUrl::PrettyDecoded);
    if (path.isEmpty())
        return QByteArrayLiteral("/");
    const QList<QByteArray> segments = path.toUtf8().split('/');
    QByteArrayList encoded;
    encoded.reserve(segments.size());
    for (const QByteArray &segment : segments)
        encoded << uriEncode(segment);
    return encoded.join('/');
}

QByteArray SigV4::canonicalQuery(const QUrl &url)
{
    const QByteArray query = url.query(QUrl::FullyEncoded).toLatin1();
    QList<QPair<QByteArray, QByteArray>> pairs;
    for (const QByteArray &item : query.split('&')) {
        if (item.isEmpty())
            continue;
        const qsizetype eq = item.indexOf('=');
        const QByteArray key = eq < 0 ? item : item.left(eq);
        const QByteArray value = eq < 0 ? QByteArray() : item.mid(eq + 1);
        // '+' is a literal plus here, not a space: only %XX is decoded before re-encoding.
        pairs.append(
            {uriEncode(QByteArray::fromPercentEncoding(key)), uriEncode(QByteArray::fromPercentEncoding(value))});
    }
    std::sort(pairs.begin(), pairs.end());
    QByteArrayList parts;
    for (const auto &[key, value] : pairs)
        parts << key + '=' + value;
    return parts.join('&');
}

QByteArray SigV4::canonicalRequest(const QByteArray &method, const QUrl &url,
                                   const QList<QPair<QByteArray, QByteArray>> &headers, const QByteArray &payloadHash,
                                   QByteArray *signedHeaders)
{
    // Lower-case names, sorted; values trimmed with inner runs of whitespace collapsed; repeated names joined by ','.
    QList<QPair<QByteArray, QByteArray>> canonical;
    for (const auto &[name, value] : headers) {
        const QByteArray lower = name.trimmed().toLower();
        const QByteArray clean = value.simplified();
        auto it = std::find_if(canonical.begin(), canonical.end(), [&](const auto &h) { return h.first == lower; });
        if (it != canonical.end())
            it->second += ',' + clean;
        else
            canonical.append({lower, clean});
    }
    std::stable_sort(canonical.begin(), canonical.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });

    QByteArray headerBlock;
    QByteArrayList names;
    for (const auto &[name, value] : canonical) {
        headerBlock += name + ':' + value + '\n';
        names << name;
    }
    const QByteArray signedList = names.join(';');
    if (signedHeaders)
        *signedHeaders = signedList;
    return method.toUpper() + '\n' + canonicalUri(url) + '\n' + canonicalQuery(url) + '\n' + headerBlock + '\n'
        + signedList + '\n' + payloadHash;
}

QByteArray SigV4::stringToSign(const QDateTime &nowUtc, const QString &region, const QString &service,
                               const QByteArray &canonicalRequest)
{
    return "AWS4-HMAC-SHA256\n" + amzDate(nowUtc) + '\n' + scope(nowUtc, region, service) + '\n'
        + sha256Hex(canonicalRequest);
}

QByteArray SigV4::signature(const QString &secret, const QDateTime &nowUtc, const QString &region,
                            const QString &service, const QByteArray &stringToSign)
{
    const QByteArray date = nowUtc.toUTC().toString(QStringLiteral("yyyyMMdd")).toLatin1();
    const QByteArray kDate = hmac("AWS4" + secret.toUtf8(), date);
    const QByteArray kRegion = hmac(kDate, region.toUtf8());
    const QByteArray kService = hmac(kRegion, service.toUtf8());
    const QByteArray kSigning = hmac(kService, QByteArrayLiteral("aws4_request"));
    return hmac(kSigning, stringToSign).toHex();
}

void SigV4::signRequest(QNetworkRequest &request, const QByteArray &method, const QByteArray &body,
                        const Credentials &creds, const QString &region, const QString &service,
                        const QDateTime &nowUtc)
{
    // Set explicitly so the Host that is signed is the Host that is sent (Qt keeps a caller's Host header).
    request.setRawHeader("Host", hostHeader(request.url()));
    request.setRawHeader("X-Amz-Date", amzDate(nowUtc));
    if (!creds.sessionToken.isEmpty())
        request.setRawHeader("X-Amz-Security-Token", creds.sessionToken.toUtf8());

    QList<QPair<QByteArray, QByteArray>> headers;
    for (const QByteArray &name : request.rawHeaderList()) {
        const QByteArray lower = name.toLower();
        if (lower == "host" || lower == "content-type" || lower.startsWith("x-amz-"))
            headers.append({name, request.rawHeader(name)});
    }
    QByteArray signedHeaders;
    const QByteArray canonical = canonicalRequest(method, request.url(), headers, sha256Hex(body), &signedHeaders);
    const QByteArray toSign = stringToSign(nowUtc, region, service, canonical);
    request.setRawHeader("Authorization",
                         "AWS4-HMAC-SHA256 Credential=" + creds.accessKeyId.toUtf8() + '/'
                             + scope(nowUtc, region, service) + ", SignedHeaders=" + signedHeaders
                             + ", Signature=" + signature(creds.secretAccessKey, nowUtc, region, service, toSign));
}

} // namespace autocomp
