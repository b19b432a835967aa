#include "exchange/autocomp_dir_files.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSaveFile>

namespace autocomp {

bool writeText(const QString &path, const QString &text, QString *error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text.toUtf8()) < 0 || !file.commit()) {
        *error = QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

bool writeJson(const QString &path, const QJsonObject &o, QString *error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(QJsonDocument(o).toJson(QJsonDocument::Indented)) < 0
        || !file.commit()) {
        *error = QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

std::optional<QString> readText(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("%1: cannot read: %2").arg(path, file.errorString());
        return std::nullopt;
    }
    return QString::fromUtf8(file.readAll());
}

std::optional<QJsonObject> readJsonObject(const QString &path, QString *error, bool *present)
{
    if (present)
        *present = QFileInfo::exists(path);
    if (!QFileInfo::exists(path))
        return QJsonObject();
    const auto text = readText(path, error);
    if (!text)
        return std::nullopt;
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(text->toUtf8(), &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        *error = QStringLiteral("%1: invalid JSON at offset %2: %3")
                     .arg(path)
                     .arg(parseError.offset)
                     .arg(parseError.errorString());
        return std::nullopt;
    }
    if (!doc.isObject()) {
        *error = QStringLiteral("%1: expected a JSON object").arg(path);
        return std::nullopt;
    }
    return doc.object();
}

QString fileModel(const QString &model)
{
    QString m = model.section(QStringLiteral("::"), -1);
    m.replace(QLatin1Char('/'), QLatin1Char('_'));
    m.replace(QLatin1Char('\\'), QLatin1Char('_'));
    if (m.isEmpty())
        m = QStringLiteral("unknown");
    return m;
}

} // namespace autocomp
