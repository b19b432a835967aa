#include "gemini_dialect.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QUrl>

namespace autocomp::test {

namespace {

const QRegularExpression &generatePath()
{
    // /v1beta/models/M:generateContent, or Vertex AI's /v1/projects/P/locations/L/publishers/google/models/M:...
    static const QRegularExpression s_path(QStringLiteral("/models/([^/:]+):(generateContent|streamGenerateContent)$"));
    return s_path;
}

QString partsText(const QJsonValue &content)
{
    QStringList texts;
    for (const QJsonValue &part : content.toObject().value(QLatin1String("parts")).toArray())
        texts.append(part.toObject().value(QLatin1String("text")).toString());
    return texts.join(u'\n');
}

QJsonObject usageObject(const DialectReply &reply)
{
    const int candidates = reply.completionTokens - reply.reasoningTokens;
    QJsonObject usage{{QStringLiteral("promptTokenCount"), reply.promptTokens},
                      {QStringLiteral("candidatesTokenCount"), candidates},
                      {QStringLiteral("totalTokenCount"), reply.promptTokens + reply.completionTokens}};
    if (reply.reasoningTokens > 0)
        usage.insert(QStringLiteral("thoughtsTokenCount"), reply.reasoningTokens);
    if (reply.cachedTokens > 0)
        usage.insert(QStringLiteral("cachedContentTokenCount"), reply.cachedTokens);
    return usage;
}

QJsonObject chunk(const DialectReply &reply, const QJsonArray &parts, const QString &finishReason, bool withUsage)
{
    QJsonObject candidate{
        {QStringLiteral("content"),
         QJsonObject{{QStringLiteral("role"), QStringLiteral("model")}, {QStringLiteral("parts"), parts}}},
        {QStringLiteral("index"), 0}};
    if (!finishReason.isEmpty())
        candidate.insert(QStringLiteral("finishReason"), finishReason);
    QJsonObject object{{QStringLiteral("candidates"), QJsonArray{candidate}},
                       {QStringLiteral("modelVersion"), reply.model},
                       {QStringLiteral("responseId"), reply.id}};
    if (withUsage)
        object.insert(QStringLiteral("usageMetadata"), usageObject(reply));
    return object;
}

QJsonObject textPart(const QString &text, bool thought = false)
{
    QJsonObject part{{QStringLiteral("text"), text}};
    if (thought)
        part.insert(QStringLiteral("thought"), true);
    return part;
}

QString statusName(int status)
{
    switch (status) {
    case 400: return QStringLiteral("INVALID_ARGUMENT");
    case 401: return QStringLiteral("UNAUTHENTICATED");
    case 403: return QStringLiteral("PERMISSION_DENIED");
    case 404: return QStringLiteral("NOT_FOUND");
    case 429: return QStringLiteral("RESOURCE_EXHAUSTED");
    case 503: return QStringLiteral("UNAVAILABLE");
    case 504: return QStringLiteral("DEADLINE_EXCEEDED");
    default: return QStringLiteral("INTERNAL");
    }
}

QJsonObject errorObject(int status, const QString &message)
{
    return QJsonObject{{QStringLiteral("error"),
                        QJsonObject{{QStringLiteral("code"), status},
                                    {QStringLiteral("message"), message},
                                    {QStringLiteral("status"), statusName(status)}}}};
}

} // namespace

QString GeminiDialect::name() const { return QStringLiteral("gemini"); }

LlmDialect::Endpoint GeminiDialect::route(const FakeHttpRequest &request) const
{
    if (request.method == "POST" && generatePath().match(request.path).hasMatch())
        return Endpoint::Generate;
    if (request.method == "GET" && request.path == QLatin1String("/v1beta/models"))
        return Endpoint::ListModels;
    return Endpoint::None;
}

bool GeminiDialect::parseRequest(const FakeHttpRequest &request, const QJsonObject &body, DialectRequest *out,
                                 QString *error) const
{
    const QRegularExpressionMatch match = generatePath().match(request.path);
    out->model = QUrl::fromPercentEncoding(match.captured(1).toUtf8());
    out->stream = match.captured(2) == QLatin1String("streamGenerateContent");
    if (out->stream && !request.query.split(u'&').contains(QLatin1String("alt=sse"))) {
        *error = QStringLiteral("fake-llm-server: streamGenerateContent is served only with alt=sse");
        return false;
    }
    const QJsonArray contents = body.value(QLatin1String("contents")).toArray();
    if (contents.isEmpty()) {
        *error = QStringLiteral("* GenerateContentRequest.contents: contents is not specified");
        return false;
    }
    for (auto it = body.begin(); it != body.end(); ++it) {
        static const QStringList s_known{QStringLiteral("contents"),
                                         QStringLiteral("systemInstruction"),
                                         QStringLiteral("generationConfig"),
                                         QStringLiteral("safetySettings"),
                                         QStringLiteral("tools"),
                                         QStringLiteral("toolConfig"),
                                         QStringLiteral("cachedContent")};
        if (!s_known.contains(it.key())) {
            *error =
                QStringLiteral("Invalid JSON payload received. Unknown name \"%1\": Cannot find field.").arg(it.key());
            return false;
        }
    }
    QStringList texts;
    const QString system = partsText(body.value(QLatin1String("systemInstruction")));
    if (!system.isEmpty())
        texts.append(system);
    for (const QJsonValue &content : contents) {
        const QString text = partsText(content);
        texts.append(text);
        if (content.toObject().value(QLatin1String("role")).toString() != QLatin1String("model"))
            out->lastUserMessage = text;
    }
    out->prompt = texts.join(u'\n');
    return true;
}

QByteArray GeminiDialect::completionBody(const DialectRequest &, const DialectReply &reply) const
{
    QJsonArray parts;
    if (!reply.reasoning.isEmpty())
        parts.append(textPart(reply.reasoning, true));
    parts.append(textPart(reply.content));
    return QJsonDocument(
               chunk(reply, parts, reply.cutAtLimit ? QStringLiteral("MAX_TOKENS") : QStringLiteral("STOP"), true))
        .toJson(QJsonDocument::Compact);
}

QList<QByteArray> GeminiDialect::streamEvents(const DialectRequest &, const DialectReply &reply) const
{
    QList<QByteArray> events;
    if (!reply.reasoning.isEmpty())
        events.append(sseEvent({}, chunk(reply, QJsonArray{textPart(reply.reasoning, true)}, {}, false)));
    const QStringList pieces = splitForStreaming(reply.content);
    for (qsizetype i = 0; i < pieces.size(); ++i) {
        const bool last = i + 1 == pieces.size();
        events.append(sseEvent(
            {},
            chunk(reply, QJsonArray{textPart(pieces.at(i))},
                  last ? (reply.cutAtLimit ? QStringLiteral("MAX_TOKENS") : QStringLiteral("STOP")) : QString(),
                  last)));
    }
    return events;
}

QByteArray GeminiDialect::errorBody(int status, const QString &message) const
{
    return QJsonDocument(errorObject(status, message)).toJson(QJsonDocument::Compact);
}

QByteArray GeminiDialect::streamErrorEvent(const QString &message) const
{
    return sseEvent({}, errorObject(500, message));
}

QByteArray GeminiDialect::modelListBody(const QStringList &models) const
{
    QJsonArray list;
    for (const QString &model : models)
        list.append(QJsonObject{{QStringLiteral("name"), QString(QStringLiteral("models/") + model)},
                                {QStringLiteral("displayName"), model},
                                {QStringLiteral("supportedGenerationMethods"),
                                 QJsonArray{QStringLiteral("generateContent"), QStringLiteral("countTokens")}}});
    return QJsonDocument(QJsonObject{{QStringLiteral("models"), list}}).toJson(QJsonDocument::Compact);
}

} // namespace autocomp::test
