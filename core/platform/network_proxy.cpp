#include "platform/network_proxy.h"

#include <QUrl>

namespace autocomp {

std::optional<QNetworkProxy> parseProxySetting(const QString &proxy, QString *error)
{
    const QString text = proxy.trimmed();
    if (text.isEmpty() || text == u"system")
        return QNetworkProxy(QNetworkProxy::DefaultProxy); // the system's configuration
    if (text == u"none" || text == u"direct")
        return QNetworkProxy(QNetworkProxy::NoProxy);
    const QUrl url(text.contains(QStringLiteral("://")) ? text : QStringLiteral("http://") + text);
    const QString scheme = url.scheme().toLower();
    if (!url.isValid() || url.host().isEmpty() || url.port() <= 0
        || !(scheme == u"http" || scheme == u"socks5" || scheme == u"socks5h")) {
        if (error)
            *error =
                QStringLiteral(
                    "proxy '%1' is not http://host:port or socks5://host:port (or \"none\", or empty for the system's)")
                    .arg(text);
        return std::nullopt;
    }
    return QNetworkProxy(scheme == u"http" ? QNetworkProxy::HttpProxy : QNetworkProxy::Socks5Proxy, url.host(),
                         quint16(url.port()), url.userName(), url.password());
}

} // namespace autocomp
