#include "openai_chat_dialect.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>

namespace autocomp::test {

namespace {

QString messageText(const QJsonValue &content)
{
    if (content.isString())
        return content.toString();
    // Content parts: [{"type": "text", "text": "..."}, {"type": "image_url", ...}]
    QStringList texts;
    const QJsonArray parts = content.toArray();
    for (const QJsonValue &part : parts) {
        if (part.toObject().value(QLatin1String("type")).toString() == QLatin1String("text"))
            texts.append(part.toObject().value(QLatin1String("text")).toString());
    }
    return texts.join(u'\n');
}

QJsonObject usageObject(const DialectReply &reply)
{
    return QJsonObject{
        {QStringLiteral("prompt_tokens"), reply.promptTokens},
        {QStringLiteral("completion_tokens"), reply.completionTokens},
        {QStringLiteral("total_tokens"), reply.promptTokens + reply.completionTokens},
        {QStringLiteral("prompt_tokens_details"), QJsonObject{{QStringLiteral("cached_tokens"), reply.cachedTokens}}},
        {QStringLiteral("completion_tokens_details"),
         QJsonObject{{QStringLiteral("reasoning_tokens"), reply.reasoningTokens}}}};
}

QByteArray sseData(const QJsonObject &object)
{
    return "data: " + QJsonDocument(object).toJson(QJsonDocument::Compact) + "\n\n";
}

} // namespace

QString OpenAiChatDialect::name() const { return QStringLiteral("openai-chat"); }

LlmDialect::Endpoint OpenAiChatDialect::route(const FakeHttpRequest &request) const
{
    // Anthropic also serves /v1/models; its clients identify themselves with anthropic-version.
    if (!request.header("anthropic-version").isEmpty())
        return Endpoint::None;
    if (request.method == "POST"
        && (request.path == QLatin1String("/v1/chat/completions")
            || request.path == QLatin1String("/chat/completions")))
        return Endpoint::Generate;
    if (request.method == "GET"
        && (request.path == QLatin1String("/v1/models") || request.path == QLatin1String("/models")))
        return Endpoint::ListModels;
    return Endpoint::None;
}

bool OpenAiChatDialect::parseRequest(const FakeHttpRequest &, const QJsonObject &body, DialectRequest *out,
                                     QString *error) const
{
    const QJsonValue model = body.value(QLatin1String("model"));
    if (!model.isString() || model.toString().isEmpty()) {
        *error = QStringLiteral("you must provide a model parameter");
        return false;
    }
    const QJsonArray messages = body.value(QLatin1String("messages")).toArray();
    if (messages.isEmpty()) {
        *error = QStringLiteral("'messages' must be a non-empty array");
        return false;
    }
    out->model = model.toString();
    QStringList texts;
    for (const QJsonValue &message : messages) {
        const QJsonObject object = message.toObject();
        const QString text = messageText(object.value(QLatin1String("content")));
        texts.append(text);
        if (object.value(QLatin1String("role")).toString() == QLatin1String("user"))
            out->lastUserMessage = text;
    }
    out->prompt = texts.join(u'\n');
    out->stream = body.value(QLatin1String("stream")).toBool();
    out->includeUsage =
        body.value(QLatin1String("stream_options")).toObject().value(QLatin1String("include_usage")).toBool();
    return true;
}

QByteArray OpenAiChatDialect::completionBody(const DialectRequest &, const DialectReply &reply) const
{
    QJsonObject message{{QStringLiteral("role"), QStringLiteral("assistant")},
                        {QStringLiteral("content"), reply.content},
                        {QStringLiteral("refusal"), QJsonValue::Null}};
    if (!reply.reasoning.isEmpty())
        message.insert(QStringLiteral("reasoning_content"), reply.reasoning); // as vLLM and DeepSeek send it
    const QJsonObject choice{
        {QStringLiteral("index"), 0},
        {QStringLiteral("message"), message},
        {QStringLiteral("logprobs"), QJsonValue::Null},
        {QStringLiteral("finish_reason"), reply.cutAtLimit ? QStringLiteral("length") : QStringLiteral("stop")}};
    const QJsonObject body{{QStringLiteral("id"), reply.id},
                           {QStringLiteral("object"), QStringLiteral("chat.completion")},
                           {QStringLiteral("created"), reply.created},
                           {QStringLiteral("model"), reply.model},
                           {QStringLiteral("choices"), QJsonArray{choice}},
                           {QStringLiteral("usage"), usageObject(reply)}};
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

QList<QByteArray> OpenAiChatDialect::streamEvents(const DialectRequest &request, const DialectReply &reply) const
{
    const auto chunk = [&](const QJsonObject &delta, const QJsonValue &finishReason) {
        QJsonObject object{{QStringLiteral("id"), reply.id},
                           {QStringLiteral("object"), QStringLiteral("chat.completion.chunk")},
                           {QStringLiteral("created"), reply.created},
                           {QStringLiteral("model"), reply.model},
                           {QStringLiteral("choices"),
                            QJsonArray{QJsonObject{{QStringLiteral("index"), 0},
                                                   {QStringLiteral("delta"), delta},
                                                   {QStringLiteral("logprobs"), QJsonValue::Null},
                                                   {QStringLiteral("finish_reason"), finishReason}}}}};
        if (request.includeUsage)
            object.insert(QStringLiteral("usage"), QJsonValue::Null);
        return sseData(object);
    };

    QList<QByteArray> events;
    events.append(chunk(
        QJsonObject{{QStringLiteral("role"), QStringLiteral("assistant")}, {QStringLiteral("content"), QString()}},
        QJsonValue::Null));
    if (!reply.reasoning.isEmpty())
        events.append(chunk(QJsonObject{{QStringLiteral("reasoning_content"), reply.reasoning}}, QJsonValue::Null));
    const QStringList pieces = splitForStreaming(reply.content);
    for (const QString &piece : pieces)
        events.append(chunk(QJsonObject{{QStringLiteral("content"), piece}}, QJsonValue::Null));
    events.append(chunk(QJsonObject{}, reply.cutAtLimit ? QStringLiteral("length") : QStringLiteral("stop")));
    if (request.includeUsage) {
        events.append(sseData(QJsonObject{{QStringLiteral("id"), reply.id},
                                          {QStringLiteral("object"), QStringLiteral("chat.completion.chunk")},
                                          {QStringLiteral("created"), reply.created},
                                          {QStringLiteral("model"), reply.model},
                                          {QStringLiteral("choices"), QJsonArray{}},
                                          {QStringLiteral("usage"), usageObject(reply)}}));
    }
    events.append(QByteArrayLiteral("data: [DONE]\n\n"));
    return events;
}

QByteArray OpenAiChatDialect::errorBody(int status, const QString &message) const
{
    QString type = QStringLiteral("server_error");
    QJsonValue code = QJsonValue::Null;
    if (status == 401) {
        type = QStringLiteral("invalid_request_error");
        code = QStringLiteral("invalid_api_key");
    } else if (status == 429) {
        type = QStringLiteral("requests");
        code = QStringLiteral("rate_limit_exceeded");
    } else if (status >= 400 && status < 500) {
        type = QStringLiteral("invalid_request_error");
    }
    const QJsonObject error{{QStringLiteral("message"), message},
                            {QStringLiteral("type"), type},
                            {QStringLiteral("param"), QJsonValue::Null},
                            {QStringLiteral("code"), code}};
    return QJsonDocument(QJsonObject{{QStringLiteral("error"), error}}).toJson(QJsonDocument::Compact);
}

QByteArray OpenAiChatDialect::streamErrorEvent(const QString &message) const
{
    return sseData(QJsonObject{{QStringLiteral("error"),
                                QJsonObject{{QStringLiteral("message"), message},
                                            {QStringLiteral("type"), QStringLiteral("server_error")},
                                            {QStringLiteral("param"), QJsonValue::Null},
                                            {QStringLiteral("code"), QJsonValue::Null}}}});
}

QByteArray OpenAiChatDialect::modelListBody(const QStringList &models) const
{
    QJsonArray data;
    for (const QString &model : models)
        data.append(QJsonObject{{QStringLiteral("id"), model},
                                {QStringLiteral("object"), QStringLiteral("model")},
                                {QStringLiteral("created"), 1700000000},
                                {QStringLiteral("owned_by"), QStringLiteral("fake-llm-server")}});
    return QJsonDocument(
               QJsonObject{{QStringLiteral("object"), QStringLiteral("list")}, {QStringLiteral("data"), data}})
        .toJson(QJsonDocument::Compact);
}

} // namespace autocomp::test
