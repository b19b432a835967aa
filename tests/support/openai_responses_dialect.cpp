#include "openai_responses_dialect.h"

#include "openai_chat_dialect.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace autocomp::test {

namespace {

QString contentText(const QJsonValue &content)
{
    if (content.isString())
        return content.toString();
    QStringList texts;
    for (const QJsonValue &part : content.toArray())
        texts.append(part.toObject().value(QLatin1String("text")).toString());
    return texts.join(u'\n');
}

QJsonObject usageObject(const DialectReply &reply)
{
    return QJsonObject{
        {QStringLiteral("input_tokens"), reply.promptTokens},
        {QStringLiteral("input_tokens_details"), QJsonObject{{QStringLiteral("cached_tokens"), reply.cachedTokens}}},
        {QStringLiteral("output_tokens"), reply.completionTokens},
        {QStringLiteral("output_tokens_details"),
         QJsonObject{{QStringLiteral("reasoning_tokens"), reply.reasoningTokens}}},
        {QStringLiteral("total_tokens"), reply.promptTokens + reply.completionTokens}};
}

QJsonObject responseObject(const DialectReply &reply, const QString &status, bool withOutput)
{
    QJsonArray output;
    if (withOutput) {
        if (!reply.reasoning.isEmpty())
            output.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("reasoning")},
                                      {QStringLiteral("id"), QStringLiteral("rs_fake")},
                                      {QStringLiteral("summary"),
                                       QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("summary_text")},
                                                              {QStringLiteral("text"), reply.reasoning}}}}});
        output.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("message")},
                                  {QStringLiteral("id"), QStringLiteral("msg_fake")},
                                  {QStringLiteral("status"), QStringLiteral("completed")},
                                  {QStringLiteral("role"), QStringLiteral("assistant")},
                                  {QStringLiteral("content"),
                                   QJsonArray{QJsonObject{{QStringLiteral("type"), QStringLiteral("output_text")},
                                                          {QStringLiteral("text"), reply.content},
                                                          {QStringLiteral("annotations"), QJsonArray{}}}}}});
    }
    QJsonObject response{{QStringLiteral("id"), reply.id},
                         {QStringLiteral("object"), QStringLiteral("response")},
                         {QStringLiteral("created_at"), reply.created},
                         {QStringLiteral("status"), status},
                         {QStringLiteral("model"), reply.model},
                         {QStringLiteral("output"), output},
                         {QStringLiteral("error"), QJsonValue::Null},
                         {QStringLiteral("incomplete_details"), QJsonValue::Null}};
    if (status == QLatin1String("incomplete"))
        response.insert(QStringLiteral("incomplete_details"),
                        QJsonObject{{QStringLiteral("reason"), QStringLiteral("max_output_tokens")}});
    if (status != QLatin1String("in_progress"))
        response.insert(QStringLiteral("usage"), usageObject(reply));
    return response;
}

} // namespace

QString OpenAiResponsesDialect::name() const { return QStringLiteral("openai-responses"); }

LlmDialect::Endpoint OpenAiResponsesDialect::route(const FakeHttpRequest &request) const
{
    if (request.method == "POST"
        && (request.path == QLatin1String("/v1/responses") || request.path == QLatin1String("/responses")))
        return Endpoint::Generate;
    return Endpoint::None;
}

bool OpenAiResponsesDialect::parseRequest(const FakeHttpRequest &, const QJsonObject &body, DialectRequest *out,
                                          QString *error) const
{
    const QJsonValue model = body.value(QLatin1String("model"));
    if (!model.isString() || model.toString().isEmpty()) {
        *error = QStringLiteral("Missing required parameter: 'model'.");
        return false;
    }
    const QJsonValue input = body.value(QLatin1String("input"));
    QStringList texts;
    const QString instructions = body.value(QLatin1String("instructions")).toString();
    if (!instructions.isEmpty())
        texts.append(instructions);
    if (input.isString()) {
        texts.append(input.toString());
        out->lastUserMessage = input.toString();
    } else if (input.isArray() && !input.toArray().isEmpty()) {
        for (const QJsonValue &item : input.toArray()) {
            const QJsonObject object = item.toObject();
            const QString text = contentText(object.value(QLatin1String("content")));
            texts.append(text);
            if (object.value(QLatin1String("role")).toString() == QLatin1String("user"))
                out->lastUserMessage = text;
        }
    } else {
        *error = QStringLiteral("Missing required parameter: 'input'.");
        return false;
    }
    out->model = model.toString();
    out->prompt = texts.join(u'\n');
    out->stream = body.value(QLatin1String("stream")).toBool();
    return true;
}

QByteArray OpenAiResponsesDialect::completionBody(const DialectRequest &, const DialectReply &reply) const
{
    return QJsonDocument(responseObject(reply,
                                        reply.cutAtLimit ? QStringLiteral("incomplete") : QStringLiteral("completed"),
                                        true))
        .toJson(QJsonDocument::Compact);
}

QList<QByteArray> OpenAiResponsesDialect::streamEvents(const DialectRequest &, const DialectReply &reply) const
{
    int sequence = 0;
    QList<QByteArray> events;
    const auto add = [&](const QByteArray &type, QJsonObject data) {
        data.insert(QStringLiteral("type"), QString::fromLatin1(type));
        data.insert(QStringLiteral("sequence_number"), sequence++);
        events.append(sseEvent(type, data));
    };
    add("response.created",
        {{QStringLiteral("response"), responseObject(reply, QStringLiteral("in_progress"), false)}});
    add("response.in_progress",
        {{QStringLiteral("response"), responseObject(reply, QStringLiteral("in_progress"), false)}});
    int outputIndex = 0;
    if (!reply.reasoning.isEmpty()) {
        for (const QString &piece : splitForStreaming(reply.reasoning))
            add("response.reasoning_summary_text.delta",
                {{QStringLiteral("item_id"), QStringLiteral("rs_fake")},
                 {QStringLiteral("output_index"), outputIndex},
                 {QStringLiteral("summary_index"), 0},
                 {QStringLiteral("delta"), piece}});
        ++outputIndex;
    }
    for (const QString &piece : splitForStreaming(reply.content))
        add("response.output_text.delta",
            {{QStringLiteral("item_id"), QStringLiteral("msg_fake")},
             {QStringLiteral("output_index"), outputIndex},
             {QStringLiteral("content_index"), 0},
             {QStringLiteral("delta"), piece}});
    add("response.output_text.done",
        {{QStringLiteral("item_id"), QStringLiteral("msg_fake")},
         {QStringLiteral("output_index"), outputIndex},
         {QStringLiteral("content_index"), 0},
         {QStringLiteral("text"), reply.content}});
    if (reply.cutAtLimit)
        add("response.incomplete",
            {{QStringLiteral("response"), responseObject(reply, QStringLiteral("incomplete"), true)}});
    else
        add("response.completed",
            {{QStringLiteral("response"), responseObject(reply, QStringLiteral("completed"), true)}});
    return events;
}

QByteArray OpenAiResponsesDialect::errorBody(int status, const QString &message) const
{
    return OpenAiChatDialect().errorBody(status, message);
}

QByteArray OpenAiResponsesDialect::streamErrorEvent(const QString &message) const
{
    return sseEvent("error",
                    QJsonObject{{QStringLiteral("type"), QStringLiteral("error")},
                                {QStringLiteral("code"), QStringLiteral("server_error")},
                                {QStringLiteral("message"), message},
                                {QStringLiteral("param"), QJsonValue::Null},
                                {QStringLiteral("sequence_number"), 99}});
}

QByteArray OpenAiResponsesDialect::modelListBody(const QStringList &models) const
{
    return OpenAiChatDialect().modelListBody(models);
}

} // namespace autocomp::test
