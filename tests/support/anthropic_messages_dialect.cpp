#include "anthropic_messages_dialect.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace autocomp::test {

namespace {

QString contentText(const QJsonValue &content)
{
    if (content.isString())
        return content.toString();
    QStringList texts;
    for (const QJsonValue &block : content.toArray())
        texts.append(block.toObject().value(QLatin1String("text")).toString());
    return texts.join(u'\n');
}

QJsonObject usageObject(const DialectReply &reply, int outputTokens)
{
    // input_tokens counts only what was not read from the cache.
    return QJsonObject{{QStringLiteral("input_tokens"), reply.promptTokens - reply.cachedTokens},
                       {QStringLiteral("cache_creation_input_tokens"), 0},
                       {QStringLiteral("cache_read_input_tokens"), reply.cachedTokens},
                       {QStringLiteral("output_tokens"), outputTokens}};
}

QString errorType(int status)
{
    switch (status) {
    case 400: return QStringLiteral("invalid_request_error");
    case 401: return QStringLiteral("authentication_error");
    case 403: return QStringLiteral("permission_error");
    case 404: return QStringLiteral("not_found_error");
    case 413: return QStringLiteral("request_too_large");
    case 429: return QStringLiteral("rate_limit_error");
    case 504: return QStringLiteral("timeout_error");
    case 529: return QStringLiteral("overloaded_error");
    default: return QStringLiteral("api_error");
    }
}

} // namespace

QString AnthropicMessagesDialect::name() const { return QStringLiteral("anthropic-messages"); }

LlmDialect::Endpoint AnthropicMessagesDialect::route(const FakeHttpRequest &request) const
{
    if (request.method == "POST" && request.path == QLatin1String("/v1/messages"))
        return Endpoint::Generate;
    if (request.method == "GET" && request.path == QLatin1String("/v1/models")
        && !request.header("anthropic-version").isEmpty())
        return Endpoint::ListModels;
    return Endpoint::None;
}

bool AnthropicMessagesDialect::parseRequest(const FakeHttpRequest &request, const QJsonObject &body,
                                            DialectRequest *out, QString *error) const
{
    if (request.header("anthropic-version").isEmpty()) {
        *error = QStringLiteral("anthropic-version: header is required");
        return false;
    }
    if (!body.value(QLatin1String("model")).isString()) {
        *error = QStringLiteral("model: Field required");
        return false;
    }
    if (!body.value(QLatin1String("max_tokens")).isDouble()) {
        *error = QStringLiteral("max_tokens: Field required");
        return false;
    }
    const QJsonArray messages = body.value(QLatin1String("messages")).toArray();
    if (messages.isEmpty()) {
        *error = QStringLiteral("messages: Field required");
        return false;
    }
    const QJsonObject thinking = body.value(QLatin1String("thinking")).toObject();
    if (thinking.value(QLatin1String("type")).toString() == QLatin1String("enabled")) {
        const int budget = thinking.value(QLatin1String("budget_tokens")).toInt();
        if (budget < 1024 || budget >= body.value(QLatin1String("max_tokens")).toInt()) {
            *error = QStringLiteral("thinking.budget_tokens: must be at least 1024 and less than max_tokens");
            return false;
        }
        if (body.contains(QLatin1String("temperature")) && body.value(QLatin1String("temperature")).toDouble() != 1.0) {
            *error = QStringLiteral("`temperature` may only be set to 1 when thinking is enabled.");
            return false;
        }
    }
    out->model = body.value(QLatin1String("model")).toString();
    QStringList texts;
    const QString system = contentText(body.value(QLatin1String("system")));
    if (!system.isEmpty())
        texts.append(system);
    for (const QJsonValue &message : messages) {
        const QJsonObject object = message.toObject();
        const QString text = contentText(object.value(QLatin1String("content")));
        texts.append(text);
        if (object.value(QLatin1String("role")).toString() == QLatin1String("user"))
            out->lastUserMessage = text;
    }
    out->prompt = texts.join(u'\n');
    out->stream = body.value(QLatin1String("stream")).toBool();
    return true;
}

QByteArray AnthropicMessagesDialect::completionBody(const DialectRequest &, const DialectReply &reply) const
{
    QJsonArray content;
    if (!reply.reasoning.isEmpty())
        content.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("thinking")},
                                   {QStringLiteral("thinking"), reply.reasoning},
                                   {QStringLiteral("signature"), QStringLiteral("ZmFrZQ==")}});
    content.append(
        QJsonObject{{QStringLiteral("type"), QStringLiteral("text")}, {QStringLiteral("text"), reply.content}});
    const QJsonObject body{
        {QStringLiteral("id"), reply.id},
        {QStringLiteral("type"), QStringLiteral("message")},
        {QStringLiteral("role"), QStringLiteral("assistant")},
        {QStringLiteral("model"), reply.model},
        {QStringLiteral("content"), content},
        {QStringLiteral("stop_reason"), reply.cutAtLimit ? QStringLiteral("max_tokens") : QStringLiteral("end_turn")},
        {QStringLiteral("stop_sequence"), QJsonValue::Null},
        {QStringLiteral("usage"), usageObject(reply, reply.completionTokens)}};
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

QList<QByteArray> AnthropicMessagesDialect::streamEvents(const DialectRequest &, const DialectReply &reply) const
{
    QList<QByteArray> events;
    const auto add = [&](const QByteArray &type, QJsonObject data) {
        data.insert(QStringLiteral("type"), QString::fromLatin1(type));
        events.append(sseEvent(type, data));
    };
    add("message_start",
        {{QStringLiteral("message"),
          QJsonObject{{QStringLiteral("id"), reply.id},
                      {QStringLiteral("type"), QStringLiteral("message")},
                      {QStringLiteral("role"), QStringLiteral("assistant")},
                      {QStringLiteral("model"), reply.model},
                      {QStringLiteral("content"), QJsonArray{}},
                      {QStringLiteral("stop_reason"), QJsonValue::Null},
                      {QStringLiteral("usage"), usageObject(reply, 1)}}}});
    int index = 0;
    const auto block = [&](const QString &type, const QString &field, const QString &deltaType, const QString &text) {
        add("content_block_start",
            {{QStringLiteral("index"), index},
             {QStringLiteral("content_block"), QJsonObject{{QStringLiteral("type"), type}, {field, QString()}}}});
        bool first = true;
        for (const QString &piece : splitForStreaming(text)) {
            add("content_block_delta",
                {{QStringLiteral("index"), index},
                 {QStringLiteral("delta"), QJsonObject{{QStringLiteral("type"), deltaType}, {field, piece}}}});
            if (first) {
                add("ping", {});
                first = false;
            }
        }
        if (type == QLatin1String("thinking"))
            add("content_block_delta",
                {{QStringLiteral("index"), index},
                 {QStringLiteral("delta"),
                  QJsonObject{{QStringLiteral("type"), QStringLiteral("signature_delta")},
                              {QStringLiteral("signature"), QStringLiteral("ZmFrZQ==")}}}});
        add("content_block_stop", {{QStringLiteral("index"), index}});
        ++index;
    };
    if (!reply.reasoning.isEmpty())
        block(QStringLiteral("thinking"), QStringLiteral("thinking"), QStringLiteral("thinking_delta"),
              reply.reasoning);
    block(QStringLiteral("text"), QStringLiteral("text"), QStringLiteral("text_delta"), reply.content);
    add("message_delta",
        {{QStringLiteral("delta"),
          QJsonObject{{QStringLiteral("stop_reason"),
                       reply.cutAtLimit ? QStringLiteral("max_tokens") : QStringLiteral("end_turn")},
                      {QStringLiteral("stop_sequence"), QJsonValue::Null}}},
         {QStringLiteral("usage"), QJsonObject{{QStringLiteral("output_tokens"), reply.completionTokens}}}});
    add("message_stop", {});
    return events;
}

QByteArray AnthropicMessagesDialect::errorBody(int status, const QString &message) const
{
    return QJsonDocument(QJsonObject{{QStringLiteral("type"), QStringLiteral("error")},
                                     {QStringLiteral("error"),
                                      QJsonObject{{QStringLiteral("type"), errorType(status)},
                                                  {QStringLiteral("message"), message}}},
                                     {QStringLiteral("request_id"), QStringLiteral("req_fake")}})
        .toJson(QJsonDocument::Compact);
}

QByteArray AnthropicMessagesDialect::streamErrorEvent(const QString &message) const
{
    return sseEvent("error",
                    QJsonObject{{QStringLiteral("type"), QStringLiteral("error")},
                                {QStringLiteral("error"),
                                 QJsonObject{{QStringLiteral("type"), QStringLiteral("overloaded_error")},
                                             {QStringLiteral("message"), message}}}});
}

QByteArray AnthropicMessagesDialect::modelListBody(const QStringList &models) const
{
    QJsonArray data;
    for (const QString &model : models)
        data.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("model")},
                                {QStringLiteral("id"), model},
                                {QStringLiteral("display_name"), model},
                                {QStringLiteral("created_at"), QStringLiteral("2025-01-01T00:00:00Z")}});
    return QJsonDocument(QJsonObject{{QStringLiteral("data"), data},
                                     {QStringLiteral("has_more"), false},
                                     {QStringLiteral("first_id"), models.value(0)},
                                     {QStringLiteral("last_id"), models.isEmpty() ? QString() : models.last()}})
        .toJson(QJsonDocument::Compact);
}

} // namespace autocomp::test
