#include "llm/price_table.h"

#include "platform/data_paths.h"

#include <QFile>
#include <QFileInfo>

#include <yaml-cpp/yaml.h>

namespace autocomp {

namespace {

double nonNegative(const YAML::Node &node, const QString &what)
{
    const double value = node.as<double>();
    if (value < 0)
        throw std::runtime_error(what.toStdString() + " must not be negative");
    return value;
}

} // namespace

std::optional<PriceTable> PriceTable::parse(const QByteArray &yaml, QString *error)
{
    PriceTable table;
    try {
        const YAML::Node root = YAML::Load(yaml.toStdString());
        if (!root.IsMap())
            throw std::runtime_error("expected a mapping with as_of and models");
        if (root["as_of"])
            table.m_asOf = QDate::fromString(QString::fromStdString(root["as_of"].as<std::string>()), Qt::ISODate);
        if (!table.m_asOf.isValid())
            throw std::runtime_error("as_of must be a date (YYYY-MM-DD)");
        const YAML::Node models = root["models"];
        if (!models || !models.IsMap())
            throw std::runtime_error("models must be a mapping of provider::model to prices");
        for (auto it = models.begin(); it != models.end(); ++it) {
            const QString key = QString::fromStdString(it->first.as<std::string>());
            if (!key.contains(QLatin1String("::")))
                throw std::runtime_error("model '" + key.toStdString() + "' must be written provider::model");
            const YAML::Node entry = it->second;
            if (!entry.IsMap() || !entry["input"] || !entry["output"])
                throw std::runtime_error("model '" + key.toStdString() + "' needs input and output prices");
            ModelPrice price;
            price.input = nonNegative(entry["input"], key + QStringLiteral(" input"));
            price.output = nonNegative(entry["output"], key + QStringLiteral(" output"));
            price.cachedInput = entry["cached_input"]
                ? nonNegative(entry["cached_input"], key + QStringLiteral(" cached_input"))
                : price.input;
            table.m_prices.insert(key, price);
        }
    } catch (const std::exception &e) {
        if (error)
            *error = QString::fromUtf8(e.what());
        return std::nullopt;
    }
    return table;
}

QStringList PriceTable::defaultLocations()
{
    QStringList locations{userLocation()};
    for (const QString &dir : DataPaths::searchDirs())
        locations << dir + QStringLiteral("/resources/prices.yaml");
    locations.removeDuplicates();
    return locations;
}

QString PriceTable::userLocation() { return DataPaths::userDataDir() + QStringLiteral("/prices.yaml"); }

QString PriceTable::shippedLocation()
{
    const QString user = QFileInfo(userLocation()).absoluteFilePath();
    for (const QString &path : defaultLocations())
        if (QFileInfo(path).absoluteFilePath() != user && QFileInfo::exists(path))
            return path;
    return {};
}

PriceTable PriceTable::loadDefault(QString *source, QString *error)
{
    for (const QString &path : defaultLocations()) {
        QFile file(path);
        if (!QFileInfo::exists(path) || !file.open(QIODevice::ReadOnly))
            continue;
        QString parseError;
        if (auto table = parse(file.readAll(), &parseError)) {
            if (source)
                *source = path;
            return *table;
        }
        if (error)
            *error = path + QStringLiteral(": ") + parseError;
        return {};
    }
    if (error)
        *error = QStringLiteral("no prices.yaml found in %1").arg(defaultLocations().join(QLatin1String(", ")));
    return {};
}

std::optional<ModelPrice> PriceTable::price(const QString &provider, const QString &model) const
{
    const QString full = provider + QStringLiteral("::") + model;
    if (auto it = m_prices.constFind(full); it != m_prices.cend())
        return *it;
    qsizetype best = -1;
    std::optional<ModelPrice> found;
    for (auto it = m_prices.cbegin(); it != m_prices.cend(); ++it) {
        if (it.key().size() > best && full.startsWith(it.key())) {
            best = it.key().size();
            found = it.value();
        }
    }
    return found;
}

std::optional<double> PriceTable::cost(const QString &provider, const QString &model, qint64 tokensIn, qint64 tokensOut,
                                       qint64 cachedTokens) const
{
    const std::optional<ModelPrice> p = price(provider, model);
    if (!p)
        return std::nullopt;
    const qint64 cached = std::clamp<qint64>(cachedTokens, 0, tokensIn);
    return (double(tokensIn - cached) * p->input + double(cached) * p->cachedInput + double(tokensOut) * p->output)
        / 1e6;
}

} // namespace autocomp
