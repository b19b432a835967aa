#pragma once

#include <QNetworkProxy>
#include <QString>

#include <optional>

namespace autocomp {

// A proxy setting as the config and the Settings dialog take it: empty or "system" (the system's
// configuration), "none" or "direct", or http://host:port, socks5://host:port, socks5h://host:port
// (a bare host:port is http). Returns nullopt and an error naming the text when it is none of these.
std::optional<QNetworkProxy> parseProxySetting(const QString &proxy, QString *error);

} // namespace autocomp
