#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

namespace autocomp {

// Every QSettings key the workbench's preferences use, in one place.
namespace SettingsKey {
inline QString providerBaseUrl(const QString &provider) { return QStringLiteral("providers/%1/baseUrl").arg(provider); }
inline QString providerConcurrency(const QString &provider)
{
    return QStringLiteral("providers/%1/concurrency").arg(provider);
}
inline QString providerEnabled(const QString &provider) { return QStringLiteral("providers/%1/enabled").arg(provider); }
inline QString sandboxMode() { return QStringLiteral("evaluation/sandbox"); }
inline QString proxy() { return QStringLiteral("network/proxy"); }
inline QString slurmPartition() { return QStringLiteral("slurm/partition"); }
inline QString slurmGres() { return QStringLiteral("slurm/gres"); }
inline QString slurmTime() { return QStringLiteral("slurm/time"); }
inline QString theme() { return QStringLiteral("appearance/theme"); }
} // namespace SettingsKey

// The workbench's preferences over QSettings, with typed getters. Setters write through and emit the
// matching ...Changed signal only when the value changes. Read on the GUI thread; runs get values.
class Settings : public QObject
{
    Q_OBJECT
public:
    explicit Settings(QObject *parent = nullptr);

    // Providers the settings list, in display order.
    static QStringList providers();

    // Empty: the provider's default (ModelSpec::defaultBaseUrl, which honours *_BASE_URL variables).
    QString providerBaseUrl(const QString &provider) const;
    // The base URL a request would use: the stored one, else the default.
    QString effectiveBaseUrl(const QString &provider) const;
    void setProviderBaseUrl(const QString &provider, const QString &url);
    int providerConcurrency(const QString &provider) const; // requests in flight at once, default 8
    void setProviderConcurrency(const QString &provider, int concurrency);
    bool providerEnabled(const QString &provider) const; // default true
    void setProviderEnabled(const QString &provider, bool enabled);

    // The proxy for LLM requests (runs and Test Connection): empty for the system's, "none", or a URL.
    QString proxy() const;
    void setProxy(const QString &proxy);
    QString sandboxMode() const; // auto | off | required
    void setSandboxMode(const QString &mode);

    // Stored for the Slurm executor; the New Run dialog and runs read them from here.
    QString slurmPartition() const;
    void setSlurmPartition(const QString &partition);
    QString slurmGres() const;
    void setSlurmGres(const QString &gres);
    QString slurmTime() const;
    void setSlurmTime(const QString &time);

    // system | light | dark (default system); anything else reads as system.
    QString theme() const;
    void setTheme(const QString &theme);
    static QStringList themes();

    static constexpr int DefaultConcurrency = 8;

Q_SIGNALS:
    void providerChanged(const QString &provider);
    void sandboxModeChanged(const QString &mode);
    void slurmChanged();
    void themeChanged(const QString &theme);

private:
    bool write(const QString &key, const QVariant &value, const QVariant &defaultValue);
};

} // namespace autocomp
