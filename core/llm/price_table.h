#pragma once

#include <QDate>
#include <QHash>
#include <QString>
#include <QStringList>

#include <optional>

namespace autocomp {

// USD per one million tokens for one model.
struct ModelPrice
{
    double input = 0;
    double output = 0;
    double cachedInput = 0; // cache reads; equal to input where a provider gives no discount
};

// The dated price table (prices.yaml). Keys are "provider::model"; a key also prices every model whose
// name it begins (dated snapshots, regional Bedrock ids), the longest such key winning.
//   as_of: 2026-03-01
//   models:
//     openai::gpt-5: {input: 1.25, output: 10, cached_input: 0.125}
class PriceTable
{
public:
    static std::optional<PriceTable> parse(const QByteArray &yaml, QString *error);
    // The user's copy ($XDG_DATA_HOME/autocomp-workbench/prices.yaml) shadows the shipped one
    // (resources/prices.yaml under the data directories). An empty table when none can be read.
    static PriceTable loadDefault(QString *source = nullptr, QString *error = nullptr);
    static QStringList defaultLocations();
    // The user's copy ($XDG_DATA_HOME/autocomp-workbench/prices.yaml), whether or not it exists.
    static QString userLocation();
    // The first shipped prices.yaml that exists (the user's copy excluded); empty when none does.
    static QString shippedLocation();

    std::optional<ModelPrice> price(const QString &provider, const QString &model) const;
    // tokensIn includes the cached tokens, tokensOut the reasoning tokens (as LlmResponse counts them).
    // nullopt when the model is not in the table.
    std::optional<double> cost(const QString &provider, const QString &model, qint64 tokensIn, qint64 tokensOut,
                               qint64 cachedTokens) const;
    QDate asOf() const { return m_asOf; }
    int size() const { return int(m_prices.size()); }
    // Every entry, keyed "provider::model" (unordered; sort the keys for display).
    const QHash<QString, ModelPrice> &entries() const { return m_prices; }

private:
    QDate m_asOf;
    QHash<QString, ModelPrice> m_prices;
};

} // namespace autocomp
