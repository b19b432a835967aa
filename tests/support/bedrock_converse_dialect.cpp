#include "bedrock_converse_dialect.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QUrl>

namespace autocomp::test {

namespace {

const QRegularExpression &conversePath()
{
    static const QRegularExpression s_path(QStringLiteral("^/model/([^/]+)/converse$"));
    return s_path;
}

QString blocksText(const QJsonValue &blocks)
{
    QStringList texts;
    for (const QJsonValue &block : blocks.toArray())
        texts.append(block.toObject().value(QLatin1String("text")).toString());
    return texts.join(u'\n');
}

} // namespace

QString BedrockConverseDialect::name() const { return QStringLiteral("bedrock-converse"); }

LlmDialect::Endpoint BedrockConverseDialect::route(const FakeHttpRequest &request) const
{
    if (request.method == "POST" && conversePath().match(request.path).hasMatch())
        return Endpoint::Generate;
    return Endpoint::None;
}

bool BedrockConverseDialect::parseRequest(const FakeHttpRequest &request, const QJsonObject &body, DialectRequest *out,
                                          QString *error) const
{
    out->model = QUrl::fromPercentEncoding(conversePath().match(request.path).captured(1).toUtf8());
    const QJsonArray messages = body.value(QLatin1String("messages")).toArray();
    if (messages.isEmpty()) {
        *error = QStringLiteral("A conversation must start with a user message. Try again with a conversation that "
                                "starts with a user message.");
        return false;
    }
    QStringList texts;
    const QString system = blocksText(body.value(QLatin1String("system")));
    if (!system.isEmpty())
        texts.append(system);
    for (const QJsonValue &message : messages) {
        const QJsonObject object = message.toObject();
        const QString text = blocksText(object.value(QLatin1String("content")));
        texts.append(text);
        if (object.value(QLatin1String("role")).toString() == QLatin1String("user"))
            out->lastUserMessage = text;
    }
    out->prompt = texts.join(u'\n');
    out->stream = false;
    return true;
}

QByteArray BedrockConverseDialect::completionBody(const DialectRequest &, const DialectReply &reply) const
{
    QJsonArray content;
    if (!reply.reasoning.isEmpty())
        content.append(
            QJsonObject{{QStringLiteral("reasoningContent"),
                         QJsonObject{{QStringLiteral("reasoningText"),
                                      QJsonObject{{QStringLiteral("text"), reply.reasoning},
                                                  {QStringLiteral("signature"), QStringLiteral("ZmFrZQ==")}}}}}});
    content.append(QJsonObject{{QStringLiteral("text"), reply.content}});
    QJsonObject usage{{QStringLiteral("inputTokens"), reply.promptTokens - reply.cachedTokens},
                      {QStringLiteral("outputTokens"), reply.completionTokens},
                      {QStringLiteral("totalTokens"), reply.promptTokens + reply.completionTokens}};
    if (reply.cachedTokens > 0)
        usage.insert(QStringLiteral("cacheReadInputTokens"), reply.cachedTokens);
    const QJsonObject body{
        {QStringLiteral("output"),
         QJsonObject{{QStringLiteral("message"),
                      QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")},
                                  {QStringLiteral("content"), content}}}}},
        {QStringLiteral("stopReason"), reply.cutAtLimit ? QStringLiteral("max_tokens") : QStringLiteral("end_turn")},
        {QStringLiteral("usage"), usage},
        {QStringLiteral("metrics"), QJsonObject{{QStringLiteral("latencyMs"), 1}}}};
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

QList<QByteArray> BedrockConverseDialect::streamEvents(const DialectRequest &request, const DialectReply &reply) const
{
    // Converse never streams (ConverseStream is a different endpoint with binary framing).
    return {completionBody(request, reply)};
}

QByteArray BedrockConverseDialect::errorBody(int, const QString &message) const
{
    return QJsonDocument(QJsonObject{{QStringLiteral("message"), message}}).toJson(QJsonDocument::Compact);
}

QByteArray BedrockConverseDialect::streamErrorEvent(const QString &message) const { return errorBody(500, message); }

QByteArray BedrockConverseDialect::modelListBody(const QStringList &) const { return "{}"; }

} // namespace autocomp::test
