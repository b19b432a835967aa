#include "llm/openai_chat_format.h"

#include "llm/llm_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace autocomp {

namespace {

void readUsage(const QJsonObject &usage, WireResult *result)
{
    if (usage.isEmpty())
        return;
    result->tokensIn = usage.value(QLatin1String("prompt_tokens")).toInteger();
    result->tokensOut = usage.value(QLatin1String("completion_tokens")).toInteger();
    result->cachedTokens = usage.value(QLatin1String("prompt_tokens_details"))
                               .toObject()
                               .value(QLatin1String("cached_tokens"))
                               .toInteger();
    result->reasoningTokens = usage.value(QLatin1String("completion_tokens_details"))
                                  .toObject()
                                  .value(QLatin1String("reasoning_tokens"))
                                  .toInteger();
}

QString errorText(const QJsonValue &error)
{
    const QString message = error.isObject() ? error.toObject().value(QLatin1String("message")).toString()
                                             : error.toString();
    return message.isEmpty() ? QStringLiteral("error event in stream") : message;
}

} // namespace

QString OpenAiChatFormat::name() const { return QStringLiteral("openai-chat"); }

WireRequest OpenAiChatFormat::build(const LlmRequest &request, const QSet<QString> &dropped) const
{
    const bool openai = request.spec.provider == QLatin1String("openai");
    QJsonArray messages;
    if (!request.system.isEmpty())
        messages.append(QJsonObject{{QStringLiteral("role"), QStringLiteral("system")},
                                    {QStringLiteral("content"), request.system}});
    messages.append(
        QJsonObject{{QStringLiteral("role"), QStringLiteral("user")}, {QStringLiteral("content"), request.prompt}});
    QJsonObject body{{QStringLiteral("model"), request.spec.model}, {QStringLiteral("messages"), messages}};
    // OpenAI's own API names the limit max_completion_tokens; compatible servers (vLLM, Ollama, ...) know max_tokens.
    body.insert(openai ? QStringLiteral("max_completion_tokens") : QStringLiteral("max_tokens"), request.maxTokens);
    const bool reasoning = openai && isReasoningModel(request.spec.model);
    if (reasoning)
        body.insert(QStringLiteral("reasoning_effort"),
                    request.reasoningEffort.isEmpty() ? QStringLiteral("medium") : request.reasoningEffort);
    else if (request.temperature)
        body.insert(QStringLiteral("temperature"), *request.temperature);
    if (request.stream) {
        body.insert(QStringLiteral("stream"), true);
        body.insert(QStringLiteral("stream_options"), QJsonObject{{QStringLiteral("include_usage"), true}});
    }
    dropParameters(&body, dropped);

    WireRequest out;
    out.url = joinUrl(request.spec.baseUrl, "/chat/completions");
    out.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    out.stream = request.stream;
    return out;
}

void OpenAiChatFormat::feedEvent(const SseEvent &event, WireResult *result) const
{
    if (event.data == "[DONE]") {
        result->complete = true;
        return;
    }
    QJsonParseError parseError;
    const QJsonObject chunk = QJsonDocument::fromJson(event.data, &parseError).object();
    if (parseError.error != QJsonParseError::NoError) {
        result->malformed = true;
        result->error = QStringLiteral("malformed stream chunk: %1").arg(parseError.errorString());
        return;
    }
    if (chunk.contains(QLatin1String("error"))) {
        result->error = errorText(chunk.value(QLatin1String("error")));
        return;
    }
    const QJsonArray choices = chunk.value(QLatin1String("choices")).toArray();
    if (!choices.isEmpty()) {
        const QJsonObject choice = choices.at(0).toObject();
        const QJsonObject delta = choice.value(QLatin1String("delta")).toObject();
        result->text += delta.value(QLatin1String("content")).toString();
        result->reasoning += delta.value(QLatin1String("reasoning_content")).toString();
        const QString finish = choice.value(QLatin1String("finish_reason")).toString();
        if (!finish.isEmpty())
            result->stopReason = finish;
    }
    readUsage(chunk.value(QLatin1String("usage")).toObject(), result);
}

bool OpenAiChatFormat::parseBody(const QByteArray &bytes, WireResult *result) const
{
    QJsonParseError parseError;
    const QJsonObject body = QJsonDocument::fromJson(bytes, &parseError).object();
    if (parseError.error != QJsonParseError::NoError) {
        result->malformed = true;
        result->error = QStringLiteral("malformed JSON response: %1").arg(parseError.errorString());
        return false;
    }
    if (body.contains(QLatin1String("error"))) {
        result->error = errorText(body.value(QLatin1String("error")));
        return false;
    }
    const QJsonObject choice = body.value(QLatin1String("choices")).toArray().at(0).toObject();
    const QJsonObject message = choice.value(QLatin1String("message")).toObject();
    result->text = message.value(QLatin1String("content")).toString();
    result->reasoning += message.value(QLatin1String("reasoning_content")).toString();
    result->stopReason = choice.value(QLatin1String("finish_reason")).toString();
    readUsage(body.value(QLatin1String("usage")).toObject(), result);
    result->complete = true;
    return true;
}

} // namespace autocomp
