#include "llm/gemini_format.h"

#include "llm/llm_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace autocomp {

namespace {

// One GenerateContentResponse: a whole body, or one chunk of a stream (each chunk is a whole object).
void readChunk(const QJsonObject &chunk, WireResult *result)
{
    const QJsonObject candidate = chunk.value(QLatin1String("candidates")).toArray().at(0).toObject();
    for (const QJsonValue &value :
         candidate.value(QLatin1String("content")).toObject().value(QLatin1String("parts")).toArray()) {
        const QJsonObject part = value.toObject();
        if (part.value(QLatin1String("thought")).toBool())
            result->reasoning += part.value(QLatin1String("text")).toString();
        else
            result->text += part.value(QLatin1String("text")).toString();
    }
    const QString finish = candidate.value(QLatin1String("finishReason")).toString();
    if (!finish.isEmpty()) {
        result->stopReason = finish;
        result->complete = true;
    }
    const QJsonObject usage = chunk.value(QLatin1String("usageMetadata")).toObject();
    if (!usage.isEmpty()) {
        // promptTokenCount includes cached content; thoughts are billed as output but counted apart.
        result->tokensIn = usage.value(QLatin1String("promptTokenCount")).toInteger();
        result->cachedTokens = usage.value(QLatin1String("cachedContentTokenCount")).toInteger();
        result->reasoningTokens = usage.value(QLatin1String("thoughtsTokenCount")).toInteger();
        result->tokensOut = usage.value(QLatin1String("candidatesTokenCount")).toInteger() + result->reasoningTokens;
    }
    const QString blocked =
        chunk.value(QLatin1String("promptFeedback")).toObject().value(QLatin1String("blockReason")).toString();
    if (!blocked.isEmpty())
        result->error = QStringLiteral("the prompt was blocked: %1").arg(blocked);
}

QString errorText(const QJsonObject &error)
{
    const QString message = error.value(QLatin1String("message")).toString();
    const QString status = error.value(QLatin1String("status")).toString();
    return status.isEmpty() ? message : QStringLiteral("%1 (%2)").arg(message, status);
}

} // namespace

QString GeminiFormat::name() const { return QStringLiteral("gemini"); }

WireRequest GeminiFormat::build(const LlmRequest &request, const QSet<QString> &dropped) const
{
    QJsonObject config{{QStringLiteral("maxOutputTokens"), request.maxTokens}};
    if (request.temperature)
        config.insert(QStringLiteral("temperature"), *request.temperature);
    if (request.thinkingBudget > 0)
        config.insert(QStringLiteral("thinkingConfig"),
                      QJsonObject{{QStringLiteral("thinkingBudget"), request.thinkingBudget},
                                  {QStringLiteral("includeThoughts"), true}});
    QJsonObject body{{QStringLiteral("contents"),
                      QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                             {QStringLiteral("parts"),
                                              QJsonArray{QJsonObject{{QStringLiteral("text"), request.prompt}}}}}}},
                     {QStringLiteral("generationConfig"), config}};
    if (!request.system.isEmpty())
        body.insert(
            QStringLiteral("systemInstruction"),
            QJsonObject{{QStringLiteral("parts"), QJsonArray{QJsonObject{{QStringLiteral("text"), request.system}}}}});
    dropParameters(&body, dropped);

    WireRequest out;
    const QByteArray model = QUrl::toPercentEncoding(request.spec.model);
    out.url = joinUrl(request.spec.baseUrl,
                      "/models/" + model + (request.stream ? ":streamGenerateContent?alt=sse" : ":generateContent"));
    out.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    out.stream = request.stream;
    return out;
}

void GeminiFormat::feedEvent(const SseEvent &event, WireResult *result) const
{
    QJsonParseError parseError;
    const QJsonObject chunk = QJsonDocument::fromJson(event.data, &parseError).object();
    if (parseError.error != QJsonParseError::NoError) {
        result->malformed = true;
        result->error = QStringLiteral("malformed stream chunk: %1").arg(parseError.errorString());
        return;
    }
    if (chunk.contains(QLatin1String("error"))) {
        result->error = errorText(chunk.value(QLatin1String("error")).toObject());
        return;
    }
    readChunk(chunk, result);
}

bool GeminiFormat::parseBody(const QByteArray &bytes, WireResult *result) const
{
    QJsonParseError parseError;
    const QJsonObject body = QJsonDocument::fromJson(bytes, &parseError).object();
    if (parseError.error != QJsonParseError::NoError) {
        result->malformed = true;
        result->error = QStringLiteral("malformed JSON response: %1").arg(parseError.errorString());
        return false;
    }
    if (body.contains(QLatin1String("error"))) {
        result->error = errorText(body.value(QLatin1String("error")).toObject());
        return false;
    }
    readChunk(body, result);
    result->complete = true;
    return true;
}

} // namespace autocomp
