#include "llm_dialect.h"

#include <QJsonDocument>

namespace autocomp::test {

LlmDialect::~LlmDialect() = default;

QByteArray LlmDialect::sseEvent(const QByteArray &name, const QJsonObject &data)
{
    QByteArray event;
    if (!name.isEmpty())
        event = "event: " + name + '\n';
    return event + "data: " + QJsonDocument(data).toJson(QJsonDocument::Compact) + "\n\n";
}

QStringList LlmDialect::splitForStreaming(const QString &content)
{
    // At most 32 pieces keeps long scripted answers quick to stream while still exercising reassembly.
    constexpr qsizetype MaxPieces = 32;
    constexpr qsizetype MinPieceLength = 4;
    const qsizetype pieceLength = std::max(MinPieceLength, (content.size() + MaxPieces - 1) / MaxPieces);
    QStringList pieces;
    qsizetype pos = 0;
    while (pos < content.size()) {
        qsizetype end = std::min(content.size(), pos + pieceLength);
        if (end < content.size() && content.at(end).isLowSurrogate())
            ++end;
        pieces.append(content.mid(pos, end - pos));
        pos = end;
    }
    return pieces;
}

} // namespace autocomp::test
