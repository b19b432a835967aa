#include "llm/openai_responses_format.h"

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
    result->tokensIn = usage.value(QLatin1String("input_tokens")).toInteger();
    result->tokensOut = usage.value(QLatin1String("output_tokens")).toInteger();
    result->cachedTokens =
        usage.value(QLatin1String("input_tokens_details")).toObject().value(QLatin1String("cached_tokens")).toInteger();
    result->reasoningTokens = usage.value(QLatin1String("output_tokens_details"))
                                  .toObject()
                                  .value(QLatin1String("reasoning_tokens"))
                                  .toInteger();
}

QString failure(const QJsonObject &response)
{
    const QJsonObject error = response.value(QLatin1String("error")).toObject();
    QString message = error.value(QLatin1String("message")).toString();
    if (message.isEmpty())
        message = QStringLiteral("the response failed");
    const QString code = error.value(QLatin1String("code")).toString();
    return code.isEmpty() ? message : QStringLiteral("%1 (%2)").arg(message, code);
}

QString incomplete(const QJsonObject &response)
{
    const QString reason =
        response.value(QLatin1String("incomplete_details")).toObject().value(QLatin1String("reason")).toString();
    return QStringLiteral("the response is incomplete: %1")
        .arg(reason.isEmpty() ? QStringLiteral("no reason given") : reason);
}

// A whole response object (non-streamed body, or the one carried by response.completed/failed/incomplete).
void readResponse(const QJsonObject &response, bool takeText, WireResult *result)
{
    readUsage(response.value(QLatin1String("usage")).toObject(), result);
    const QString status = response.value(QLatin1String("status")).toString();
    result->stopReason = status;
    if (status == QLatin1String("failed"))
        result->error = failure(response);
    else if (status == QLatin1String("incomplete")) {
        // Cut at the output limit: an answer all the same (billed), with the reason as its stop reason;
        // whoever reads it decides what a cut answer is worth. Any other reason (a content filter) fails it.
        const QString reason =
            response.value(QLatin1String("incomplete_details")).toObject().value(QLatin1String("reason")).toString();
        if (reason == QLatin1String("max_output_tokens"))
            result->stopReason = reason;
        else
            result->error = incomplete(response);
    }
    if (!takeText)
        return;
    QString text;
    QString reasoning;
    for (const QJsonValue &item : response.value(QLatin1String("output")).toArray()) {
        const QJsonObject object = item.toObject();
        const QString type = object.value(QLatin1String("type")).toString();
        if (type == QLatin1String("message")) {
            for (const QJsonValue &part : object.value(QLatin1String("content")).toArray())
                if (part.toObject().value(QLatin1String("type")).toString() == QLatin1String("output_text"))
                    text += part.toObject().value(QLatin1String("text")).toString();
        } else if (type == QLatin1String("reasoning")) {
            for (const QJsonValue &part : object.value(QLatin1String("summary")).toArray())
                reasoning += part.toObject().value(QLatin1String("text")).toString();
        }
    }
    result->text = text;
    result->reasoning = reasoning;
}

} // namespace

QString OpenAiResponsesFormat::name() const { return QStringLiteral("openai-responses"); }

WireRequest OpenAiResponsesFormat::build(const LlmRequest &request, const QSet<QString> &dropped) const
{
    QJsonObject body{{QStringLiteral("model"), request.spec.model},
                     {QStringLiteral("input"),
                      QJsonArray{QJsonObject{{QStringLiteral("role"), QStringLiteral("user")},
                                             {QStringLiteral("content"), request.prompt}}}},
                     {QStringLiteral("max_output_tokens"), request.maxTokens},
                     // Nothing is kept server side: every request carries its whole context.
                     {QStringLiteral("store"), false}};
    if (!request.system.isEmpty())
        body.insert(QStringLiteral("instructions"), request.system);
    if (isReasoningModel(request.spec.model))
        body.insert(
            QStringLiteral("reasoning"),
            QJsonObject{{QStringLiteral("effort"),
                         request.reasoningEffort.isEmpty() ? QStringLiteral("medium") : request.reasoningEffort}});
    else if (request.temperature)
        body.insert(QStringLiteral("temperature"), *request.temperature);
    if (request.stream)
        body.insert(QStringLiteral("stream"), true);
    dropParameters(&body, dropped);

    WireRequest out;
    out.url = joinUrl(request.spec.baseUrl, "/responses");
    out.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
    out.stream = request.stream;
    return out;
}

void OpenAiResponsesFormat::feedEvent(const SseEvent &event, WireResult *result) const
{
    QJsonParseError parseError;
    const QJsonObject data = QJsonDocument::fromJson(event.data, &parseError).object();
    if (parseError.error != QJsonParseError::NoError) {
        result->malformed = true;
        result->error = QStringLiteral("malformed stream event: %1").arg(parseError.errorString());
        return;
    }
    // The type is in both the event line and the data; the data's is authoritative.
    QString type = data.value(QLatin1String("type")).toString();
    if (type.isEmpty())
        type = QString::fromUtf8(event.event);
    if (type == QLatin1String("response.output_text.delta")) {
        result->text += data.value(QLatin1String("delta")).toString();
    } else if (type == QLatin1String("response.reasoning_summary_text.delta")
               || type == QLatin1String("response.reasoning_text.delta")) {
        result->reasoning += data.value(QLatin1String("delta")).toString();
    } else if (type == QLatin1String("response.completed") || type == QLatin1String("response.failed")
               || type == QLatin1String("response.incomplete")) {
        readResponse(data.value(QLatin1String("response")).toObject(), false, result);
        result->complete = true;
    } else if (type == QLatin1String("error")) {
        const QString message = data.value(QLatin1String("message")).toString();
        result->error = message.isEmpty() ? errorMessage(event.data) : message;
    }
}

bool OpenAiResponsesFormat::parseBody(const QByteArray &bytes, WireResult *result) const
{
    QJsonParseError parseError;
    const QJsonObject body = QJsonDocument::fromJson(bytes, &parseError).object();
    if (parseError.error != QJsonParseError::NoError) {
        result->malformed = true;
        result->error = QStringLiteral("malformed JSON response: %1").arg(parseError.errorString());
        return false;
    }
    if (body.value(QLatin1String("error")).isObject() && !body.contains(QLatin1String("output"))) {
        result->error = errorMessage(bytes);
        return false;
    }
    readResponse(body, true, result);
    result->complete = true;
    return true;
}

} // namespace autocomp
