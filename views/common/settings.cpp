#include "common/settings.h"

#include "llm/model_spec.h"

#include <QSettings>
#include <QUrl>

namespace autocomp {

Settings::Settings(QObject *parent) : QObject(parent) {}

QStringList Settings::providers()
{
    return {QStringLiteral("openai"),   QStringLiteral("anthropic"),  QStringLiteral("gcp"),  QStringLiteral("aws"),
            QStringLiteral("together"), QStringLiteral("openrouter"), QStringLiteral("vllm"), QStringLiteral("ollama")};
}

bool Settings::write(const QString &key, const QVariant &value, const QVariant &defaultValue)
{
    QSettings settings;
    if (settings.value(key, defaultValue) == value)
        return false;
    settings.setValue(key, value);
    return true;
}

QString Settings::providerBaseUrl(const QString &provider) const
{
    return QSettings().value(SettingsKey::providerBaseUrl(provider)).toString();
}

QString Settings::effectiveBaseUrl(const QString &provider) const
{
    const QString stored = providerBaseUrl(provider);
    return stored.isEmpty() ? ModelSpec::defaultBaseUrl(provider).toString() : stored;
}

void Settings::setProviderBaseUrl(const QString &provider, const QString &url)
{
    if (write(SettingsKey::providerBaseUrl(provider), url.trimmed(), QString()))
        Q_EMIT providerChanged(provider);
}

int Settings::providerConcurrency(const QString &provider) const
{
    return qMax(1, QSettings().value(SettingsKey::providerConcurrency(provider), DefaultConcurrency).toInt());
}

void Settings::setProviderConcurrency(const QString &provider, int concurrency)
{
    if (write(SettingsKey::providerConcurrency(provider), qMax(1, concurrency), DefaultConcurrency))
        Q_EMIT providerChanged(provider);
}

bool Settings::providerEnabled(const QString &provider) const
{
    return QSettings().value(SettingsKey::providerEnabled(provider), true).toBool();
}

void Settings::setProviderEnabled(const QString &provider, bool enabled)
{
    if (write(SettingsKey::providerEnabled(provider), enabled, true))
        Q_EMIT providerChanged(provider);
}

QString Settings::proxy() const { return QSettings().value(SettingsKey::proxy()).toString(); }

void Settings::setProxy(const QString &proxy) { write(SettingsKey::proxy(), proxy.trimmed(), QString()); }

QString Settings::sandboxMode() const
{
    return QSettings().value(SettingsKey::sandboxMode(), QStringLiteral("auto")).toString();
}

void Settings::setSandboxMode(const QString &mode)
{
    if (write(SettingsKey::sandboxMode(), mode, QStringLiteral("auto")))
        Q_EMIT sandboxModeChanged(mode);
}

QString Settings::slurmPartition() const { return QSettings().value(SettingsKey::slurmPartition()).toString(); }

void Settings::setSlurmPartition(const QString &partition)
{
    if (write(SettingsKey::slurmPartition(), partition, QString()))
        Q_EMIT slurmChanged();
}

QString Settings::slurmGres() const { return QSettings().value(SettingsKey::slurmGres()).toString(); }

void Settings::setSlurmGres(const QString &gres)
{
    if (write(SettingsKey::slurmGres(), gres, QString()))
        Q_EMIT slurmChanged();
}

QString Settings::slurmTime() const { return QSettings().value(SettingsKey::slurmTime()).toString(); }

void Settings::setSlurmTime(const QString &time)
{
    if (write(SettingsKey::slurmTime(), time, QString()))
        Q_EMIT slurmChanged();
}

QStringList Settings::themes() { return {QStringLiteral("system"), QStringLiteral("light"), QStringLiteral("dark")}; }

QString Settings::theme() const
{
    const QString theme = QSettings().value(SettingsKey::theme(), QStringLiteral("system")).toString();
    return themes().contains(theme) ? theme : QStringLiteral("system");
}

void Settings::setTheme(const QString &theme)
{
    const QString value = themes().contains(theme) ? theme : QStringLiteral("system");
    if (write(SettingsKey::theme(), value, QStringLiteral("system")))
        Q_EMIT themeChanged(value);
}

} // namespace autocomp
