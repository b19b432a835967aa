#include "llm/bedrock_converse_format.h"

#include "llm/llm_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace autocomp {

QString BedrockConverseFormat::name() const { return QStringLiteral("bedrock-converse"); }

WireRequest BedrockConverseFormat::build(const LlmRequest &request, const QSet<QString> &dropped) const
{
    QJsonObject config{{QStringLiteral("maxTokens"), request.maxTokens}};
    if (request.temperature && request.thinkingBudget <= 0)
        config.insert(QStringLiteral("temperature"), *request.temperature);
    QJsonObject body{{QStringLiteral("messages"),
                      QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                             {QStringLiteral("content"),
                                              QJsonArray{QJsonObject{{QStringLiteral("text"), request.prompt}}}}}}},
                     {QStringLiteral("inferenceConfig"), config}};
    if (!request.system.isEmpty())
        body.insert(QStringLiteral("system"), QJsonArray{QJsonObject{{QStringLiteral("text"), request.system}}});
    // Claude's extended thinking goes through the model-specific fields.
    if (request.thinkingBudget > 0)
        body.insert(QStringLiteral("additionalModelRequestFields"),
                    QJsonObject{{QStringLiteral("thinking"),
                                 QJsonObject{{QStringLiteral("type"), QStringLiteral("enabled")},
                                             {QStringLiteral("budget_tokens"), request.thinkingBudget}}}});
    dropParameters(&body, dropped);

    WireRequest out;
    // Model ids hold ':' (anthropic.claude-...-v1:0); the path carries them percent-encoded, as SigV4 signs it.
    out.url = joinUrl(request.spec.baseUrl, "/model/" + QUrl::toPercentEncoding(request.spec.model) + "/converse");
    out.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    out.stream = false;
    return out;
}

void BedrockConverseFormat::feedEvent(const SseEvent &, WireResult *result) const
{
    result->error = QStringLiteral("Bedrock Converse does not stream as server-sent events");
}

bool BedrockConverseFormat::parseBody(const QByteArray &bytes, WireResult *result) const
{
    QJsonParseError parseError;
    const QJsonObject body = QJsonDocument::fromJson(bytes, &parseError).object();
    if (parseError.error != QJsonParseError::NoError) {
        result->malformed = true;
        result->error = QStringLiteral("malformed JSON response: %1").arg(parseError.errorString());
        return false;
    }
    const QJsonObject message =
        body.value(QLatin1String("output")).toObject().value(QLatin1String("message")).toObject();
    if (message.isEmpty()) {
        result->error = errorMessage(bytes);
        return false;
    }
    for (const QJsonValue &value : message.value(QLatin1String("content")).toArray()) {
        const QJsonObject block = value.toObject();
        result->text += block.value(QLatin1String("text")).toString();
        result->reasoning += block.value(QLatin1String("reasoningContent"))
                                 .toObject()
                                 .value(QLatin1String("reasoningText"))
                                 .toObject()
                                 .value(QLatin1String("text"))
                                 .toString();
    }
    result->stopReason = body.value(QLatin1String("stopReason")).toString();
    const QJsonObject usage = body.value(QLatin1String("usage")).toObject();
    result->cachedTokens = usage.value(QLatin1String("cacheReadInputTokens")).toInteger();
    result->tokensIn = usage.value(QLatin1String("inputTokens")).toInteger() + result->cachedTokens
        + usage.value(QLatin1String("cacheWriteInputTokens")).toInteger();
    result->tokensOut = usage.value(QLatin1String("outputTokens")).toInteger();
    result->complete = true;
    return true;
}

} // namespace autocomp
