#include "llm/anthropic_messages_format.h"

#include "llm/llm_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace autocomp {

namespace {

// The SDKs refuse non-streaming requests expected to run past 10 minutes: about this many output tokens.
constexpr int NonStreamingTokenLimit = 21333;

void readUsage(const QJsonObject &usage, WireResult *result)
{
    if (usage.isEmpty())
        return;
    // input_tokens counts only uncached input; cache reads and writes come separately.
    if (usage.contains(QLatin1String("input_tokens"))) {
        const qint64 cacheRead = usage.value(QLatin1String("cache_read_input_tokens")).toInteger();
        result->cachedTokens = cacheRead;
        result->tokensIn = usage.value(QLatin1String("input_tokens")).toInteger() + cacheRead
            + usage.value(QLatin1String("cache_creation_input_tokens")).toInteger();
    }
    if (usage.contains(QLatin1String("output_tokens")))
        result->tokensOut = usage.value(QLatin1String("output_tokens")).toInteger(); // cumulative, thinking included
}

QString errorText(const QJsonObject &error)
{
    QString message = error.value(QLatin1String("message")).toString();
    const QString type = error.value(QLatin1String("type")).toString();
    if (type.isEmpty())
        return message;
    return QStringLiteral("%1 (%2)").arg(message, type);
}

} // namespace

QString AnthropicMessagesFormat::name() const { return QStringLiteral("anthropic-messages"); }

WireRequest AnthropicMessagesFormat::build(const LlmRequest &request, const QSet<QString> &dropped) const
{
    QJsonObject body{{QStringLiteral("model"), request.spec.model},
                     {QStringLiteral("max_tokens"), request.maxTokens},
                     {QStringLiteral("messages"),
                      QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                             {QStringLiteral("content"), request.prompt}}}}};
    if (!request.system.isEmpty())
        body.insert(QStringLiteral("system"), request.system);
    if (request.thinkingBudget > 0) {
        // Extended thinking needs budget_tokens below max_tokens and rejects a changed temperature.
        body.insert(QStringLiteral("thinking"),
                    QJsonObject{{QStringLiteral("type"), QStringLiteral("enabled")},
                                {QStringLiteral("budget_tokens"), request.thinkingBudget}});
        if (request.thinkingBudget >= request.maxTokens)
            body.insert(QStringLiteral("max_tokens"), request.thinkingBudget + request.maxTokens);
    } else if (request.temperature) {
        body.insert(QStringLiteral("temperature"), *request.temperature);
    }
    const bool stream = request.stream || body.value(QLatin1String("max_tokens")).toInt() > NonStreamingTokenLimit;
    if (stream)
        body.insert(QStringLiteral("stream"), true);
    dropParameters(&body, dropped);

    WireRequest out;
    out.url = joinUrl(request.spec.baseUrl, "/v1/messages");
    out.headers.append({QByteArrayLiteral("anthropic-version"), QByteArrayLiteral("2023-06-01")});
    out.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    out.stream = stream;
    return out;
}

void AnthropicMessagesFormat::feedEvent(const SseEvent &event, WireResult *result) const
{
    const QByteArray type = event.event;
    if (type == "ping")
        return;
    QJsonParseError parseError;
    const QJsonObject data = QJsonDocument::fromJson(event.data, &parseError).object();
    if (parseError.error != QJsonParseError::NoError) {
        result->malformed = true;
        result->error = QStringLiteral("malformed stream event: %1").arg(parseError.errorString());
        return;
    }
    if (type == "message_start") {
        readUsage(data.value(QLatin1String("message")).toObject().value(QLatin1String("usage")).toObject(), result);
    } else if (type == "content_block_start") {
        // A block may start with text already in it.
        const QJsonObject block = data.value(QLatin1String("content_block")).toObject();
        result->text += block.value(QLatin1String("text")).toString();
        result->reasoning += block.value(QLatin1String("thinking")).toString();
    } else if (type == "content_block_delta") {
        const QJsonObject delta = data.value(QLatin1String("delta")).toObject();
        const QString deltaType = delta.value(QLatin1String("type")).toString();
        if (deltaType == QLatin1String("text_delta"))
            result->text += delta.value(QLatin1String("text")).toString();
        else if (deltaType == QLatin1String("thinking_delta"))
            result->reasoning += delta.value(QLatin1String("thinking")).toString();
    } else if (type == "message_delta") {
        const QString stop =
            data.value(QLatin1String("delta")).toObject().value(QLatin1String("stop_reason")).toString();
        if (!stop.isEmpty())
            result->stopReason = stop;
        readUsage(data.value(QLatin1String("usage")).toObject(), result);
    } else if (type == "message_stop") {
        result->complete = true;
    } else if (type == "error") {
        result->error = errorText(data.value(QLatin1String("error")).toObject());
    }
}

bool AnthropicMessagesFormat::parseBody(const QByteArray &bytes, WireResult *result) const
{
    QJsonParseError parseError;
    const QJsonObject body = QJsonDocument::fromJson(bytes, &parseError).object();
    if (parseError.error != QJsonParseError::NoError) {
        result->malformed = true;
        result->error = QStringLiteral("malformed JSON response: %1").arg(parseError.errorString());
        return false;
    }
    if (body.value(QLatin1String("type")).toString() == QLatin1String("error")) {
        result->error = errorText(body.value(QLatin1String("error")).toObject());
        return false;
    }
    for (const QJsonValue &value : body.value(QLatin1String("content")).toArray()) {
        const QJsonObject block = value.toObject();
        const QString type = block.value(QLatin1String("type")).toString();
        if (type == QLatin1String("text"))
            result->text += block.value(QLatin1String("text")).toString();
        else if (type == QLatin1String("thinking"))
            result->reasoning += block.value(QLatin1String("thinking")).toString();
    }
    result->stopReason = body.value(QLatin1String("stop_reason")).toString();
    readUsage(body.value(QLatin1String("usage")).toObject(), result);
    result->complete = true;
    return true;
}

} // namespace autocomp
