// Tests the loopback LLM test double against a real HTTP client (QNetworkAccessManager and raw sockets).
#include "fake_llm_server.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <memory>
#include <vector>

using namespace Qt::StringLiterals;
using autocomp::test::FakeLlmServer;

namespace {

constexpr int Timeout = 10000;

QByteArray chatBody(const QString &userMessage, const QString &model = u"gpt-test"_s, bool stream = false,
                    bool includeUsage = false, const QString &systemMessage = {})
{
    QJsonArray messages;
    if (!systemMessage.isEmpty())
        messages.append(QJsonObject{{u"role"_s, u"system"_s}, {u"content"_s, systemMessage}});
    messages.append(QJsonObject{{u"role"_s, u"user"_s}, {u"content"_s, userMessage}});
    QJsonObject body{{u"model"_s, model}, {u"messages"_s, messages}};
    if (stream)
        body.insert(u"stream"_s, true);
    if (includeUsage)
        body.insert(u"stream_options"_s, QJsonObject{{u"include_usage"_s, true}});
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

QNetworkReply *post(QNetworkAccessManager &nam, const FakeLlmServer &server, const QByteArray &body,
                    const QString &path = u"/v1/chat/completions"_s)
{
    QUrl url = server.baseUrl();
    url.setPath(path);
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    request.setRawHeader("Authorization", "Bearer sk-test");
    return nam.post(request, body);
}

int statusOf(const QNetworkReply *reply) { return reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(); }

QString contentOf(const QByteArray &body)
{
    return QJsonDocument::fromJson(body).object()[u"choices"_s][0][u"message"_s][u"content"_s].toString();
}

QString errorMessageOf(const QByteArray &body)
{
    return QJsonDocument::fromJson(body).object()[u"error"_s][u"message"_s].toString();
}

// The payloads of the `data:` events of an SSE body, in order.
QList<QByteArray> sseData(const QByteArray &body)
{
    QList<QByteArray> data;
    const QList<QByteArray> events = body.split('\n');
    for (const QByteArray &line : events) {
        if (line.startsWith("data: "))
            data.append(line.mid(6));
    }
    return data;
}

QByteArray readAllFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Length of the first complete HTTP response (Content-Length framed) in `buffer`; 0 while incomplete.
qsizetype completeResponseLength(const QByteArray &buffer)
{
    const qsizetype headEnd = buffer.indexOf("\r\n\r\n");
    if (headEnd < 0)
        return 0;
    const QByteArray head = buffer.left(headEnd).toLower();
    const qsizetype lengthPos = head.indexOf("content-length:");
    if (lengthPos < 0)
        return 0;
    const qsizetype lineEnd = head.indexOf("\r\n", lengthPos);
    const qsizetype length =
        head.mid(lengthPos + 15, lineEnd < 0 ? -1 : lineEnd - lengthPos - 15).trimmed().toLongLong();
    return buffer.size() >= headEnd + 4 + length ? headEnd + 4 + length : 0;
}

// Removes the first complete response from `buffer`, returning its head and body.
std::pair<QByteArray, QByteArray> takeResponse(QByteArray *buffer)
{
    const qsizetype length = completeResponseLength(*buffer);
    const qsizetype headEnd = buffer->indexOf("\r\n\r\n");
    std::pair<QByteArray, QByteArray> response{buffer->left(headEnd), buffer->mid(headEnd + 4, length - headEnd - 4)};
    buffer->remove(0, length);
    return response;
}

} // namespace

class TestFakeLlmServer : public QObject
{
    Q_OBJECT

private:
    // Starts `server` with `yaml`; reports why it could not.
    static bool start(FakeLlmServer &server, const QByteArray &yaml, const QString &baseDir = {})
    {
        QString error;
        if (!server.loadScriptText(yaml, baseDir, &error)) {
            qWarning() << "script rejected:" << error;
            return false;
        }
        return server.listen();
    }

private Q_SLOTS:
    void nonStreaming_data()
    {
        QTest::addColumn<QByteArray>("script");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("userMessage");
        QTest::addColumn<QString>("content");
        QTest::addColumn<int>("promptTokens");
        QTest::addColumn<int>("completionTokens");

        QTest::newRow("scripted usage") << QByteArray(R"(
rules:
  - name: answer
    responses:
      - content: "def kernel(): pass"
        usage: {prompt_tokens: 1200, completion_tokens: 300}
)") << u"/v1/chat/completions"_s << u"Write a kernel"_s
                                        << u"def kernel(): pass"_s << 1200 << 300;
        // Estimated: ceil(chars / 4) of the prompt (14 chars) and of the content (20 chars).
        QTest::newRow("estimated usage") << QByteArray(R"(
rules:
  - responses:
      - content: "12345678901234567890"
)") << u"/v1/chat/completions"_s << u"Write a kernel"_s
                                         << u"12345678901234567890"_s << 4 << 5;
        QTest::newRow("base url ending in /v1") << QByteArray(R"(
rules:
  - responses:
      - content: "ok"
        usage: {prompt_tokens: 7}
)") << u"/chat/completions"_s << u"hello"_s << u"ok"_s
                                                << 7 << 1;
    }

    void nonStreaming()
    {
        QFETCH(QByteArray, script);
        QFETCH(QString, path);
        QFETCH(QString, userMessage);
        QFETCH(QString, content);
        QFETCH(int, promptTokens);
        QFETCH(int, completionTokens);

        FakeLlmServer server;
        QVERIFY(start(server, script));
        QNetworkAccessManager nam;
        std::unique_ptr<QNetworkReply> reply(post(nam, server, chatBody(userMessage, u"gpt-4o"_s), path));
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);

        QCOMPARE(reply->error(), QNetworkReply::NoError);
        QCOMPARE(statusOf(reply.get()), 200);
        QVERIFY(reply->header(QNetworkRequest::ContentTypeHeader).toString().startsWith(u"application/json"_s));
        const QJsonObject body = QJsonDocument::fromJson(reply->readAll()).object();
        QCOMPARE(body[u"object"_s].toString(), u"chat.completion"_s);
        QCOMPARE(body[u"model"_s].toString(), u"gpt-4o"_s);
        const QJsonObject choice = body[u"choices"_s][0].toObject();
        QCOMPARE(choice[u"message"_s][u"role"_s].toString(), u"assistant"_s);
        QCOMPARE(choice[u"message"_s][u"content"_s].toString(), content);
        QCOMPARE(choice[u"finish_reason"_s].toString(), u"stop"_s);
        QCOMPARE(body[u"usage"_s][u"prompt_tokens"_s].toInt(), promptTokens);
        QCOMPARE(body[u"usage"_s][u"completion_tokens"_s].toInt(), completionTokens);
        QCOMPARE(body[u"usage"_s][u"total_tokens"_s].toInt(), promptTokens + completionTokens);

        QCOMPARE(server.requestCount(), 1);
        const auto recorded = server.requests().constFirst();
        QCOMPARE(recorded.path, path);
        QCOMPARE(recorded.model, u"gpt-4o"_s);
        QCOMPARE(recorded.lastUserMessage, userMessage);
        QCOMPARE(recorded.header("authorization"), QByteArray("Bearer sk-test"));
        QVERIFY(!recorded.stream);
    }

    void streaming_data()
    {
        QTest::addColumn<bool>("includeUsage");
        QTest::newRow("with include_usage") << true;
        QTest::newRow("without include_usage") << false;
    }

    void streaming()
    {
        QFETCH(bool, includeUsage);
        const QString content = u"__global__ void gemm(float* a) { /* tiled, 128x128 blocks, ü∑ 😀 */ }"_s;
        FakeLlmServer server;
        QVERIFY(start(server, QByteArray(R"(
rules:
  - responses:
      - content: "__global__ void gemm(float* a) { /* tiled, 128x128 blocks, ü∑ 😀 */ }"
        usage: {prompt_tokens: 10, completion_tokens: 20}
        chunk_delay_ms: 2
)")));
        QNetworkAccessManager nam;
        std::unique_ptr<QNetworkReply> reply(post(nam, server, chatBody(u"go"_s, u"gpt-test"_s, true, includeUsage)));
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);
        QCOMPARE(reply->error(), QNetworkReply::NoError);
        QVERIFY(reply->header(QNetworkRequest::ContentTypeHeader).toString().startsWith(u"text/event-stream"_s));

        const QList<QByteArray> data = sseData(reply->readAll());
        QVERIFY(data.size() >= 4);
        QCOMPARE(data.constLast(), QByteArray("[DONE]"));

        QString reassembled;
        int contentChunks = 0;
        int usageChunks = 0;
        QString finishReason;
        for (qsizetype i = 0; i + 1 < data.size(); ++i) {
            QJsonParseError error{};
            const QJsonObject chunk = QJsonDocument::fromJson(data.at(i), &error).object();
            QCOMPARE(error.error, QJsonParseError::NoError);
            QCOMPARE(chunk[u"object"_s].toString(), u"chat.completion.chunk"_s);
            const QJsonArray choices = chunk[u"choices"_s].toArray();
            if (choices.isEmpty()) {
                ++usageChunks;
                QCOMPARE(i, data.size() - 2); // the usage chunk comes last, right before [DONE]
                QCOMPARE(chunk[u"usage"_s][u"prompt_tokens"_s].toInt(), 10);
                QCOMPARE(chunk[u"usage"_s][u"completion_tokens"_s].toInt(), 20);
                QCOMPARE(chunk[u"usage"_s][u"total_tokens"_s].toInt(), 30);
                continue;
            }
            const QJsonObject delta = choices.at(0)[u"delta"_s].toObject();
            if (i == 0)
                QCOMPARE(delta[u"role"_s].toString(), u"assistant"_s);
            if (!delta[u"content"_s].toString().isEmpty())
                ++contentChunks;
            reassembled += delta[u"content"_s].toString();
            if (!choices.at(0)[u"finish_reason"_s].isNull())
                finishReason = choices.at(0)[u"finish_reason"_s].toString();
        }
        QCOMPARE(reassembled, content);
        QVERIFY2(contentChunks >= 3, "content should arrive in several chunks");
        QCOMPARE(finishReason, u"stop"_s);
        QCOMPARE(usageChunks, includeUsage ? 1 : 0);
        QVERIFY(server.requests().constFirst().stream);
    }

    void ruleMatching_data()
    {
        QTest::addColumn<QString>("system");
        QTest::addColumn<QString>("user");
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("rule");
        QTest::addColumn<QString>("content");

        QTest::newRow("code prompt") << QString() << u"Rewrite it.\nOptimized code:\n"_s << u"gpt-4o"_s << u"code"_s
                                     << u"CODE"_s;
        QTest::newRow("first matching rule wins")
            << QString() << u"Make a plan. Optimized code:"_s << u"gpt-4o"_s << u"code"_s << u"CODE"_s;
        QTest::newRow("model regex selects")
            << QString() << u"Make a plan"_s << u"gpt-4o"_s << u"plan-gpt"_s << u"GPT PLAN"_s;
        QTest::newRow("model regex skips")
            << QString() << u"Make a plan"_s << u"claude-sonnet"_s << u"plan-any"_s << u"ANY PLAN"_s;
        QTest::newRow("anchored regex needs the end")
            << QString() << u"Optimized code: below"_s << u"gpt-4o"_s << u"fallback"_s << u"FALLBACK"_s;
        QTest::newRow("only the last user message is matched")
            << u"Optimized code:"_s << u"hello"_s << u"gpt-4o"_s << u"fallback"_s << u"FALLBACK"_s;
    }

    void ruleMatching()
    {
        QFETCH(QString, system);
        QFETCH(QString, user);
        QFETCH(QString, model);
        QFETCH(QString, rule);
        QFETCH(QString, content);

        FakeLlmServer server;
        QVERIFY(start(server, QByteArray(R"(
rules:
  - name: code
    match: 'Optimized code:\s*$'
    cycle: true
    responses: [{content: CODE}]
  - name: plan-gpt
    match: '(?i)plan'
    model: '^gpt'
    cycle: true
    responses: [{content: GPT PLAN}]
  - name: plan-any
    match: '(?i)plan'
    cycle: true
    responses: [{content: ANY PLAN}]
  - name: fallback
    cycle: true
    responses: [{content: FALLBACK}]
)")));
        QNetworkAccessManager nam;
        std::unique_ptr<QNetworkReply> reply(post(nam, server, chatBody(user, model, false, false, system)));
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);
        QCOMPARE(statusOf(reply.get()), 200);
        QCOMPARE(contentOf(reply->readAll()), content);
        const auto recorded = server.requests().constFirst();
        QCOMPARE(recorded.ruleName, rule);
        QCOMPARE(recorded.responseIndex, 0);
        QCOMPARE(recorded.prompt, system.isEmpty() ? user : system + u'\n' + user);
    }

    void exhaustionAndCycle()
    {
        FakeLlmServer server;
        QVERIFY(start(server, QByteArray(R"(
rules:
  - name: once
    match: once
    responses: [{content: first}, {content: second}]
  - name: loop
    match: loop
    cycle: true
    responses: [{content: a}, {content: b}]
)")));
        QNetworkAccessManager nam;
        const auto ask = [&](const QString &message) {
            std::unique_ptr<QNetworkReply> reply(post(nam, server, chatBody(message)));
            QSignalSpy finished(reply.get(), &QNetworkReply::finished);
            finished.wait(Timeout);
            return std::make_pair(statusOf(reply.get()), reply->readAll());
        };

        QCOMPARE(contentOf(ask(u"once"_s).second), u"first"_s);
        QCOMPARE(contentOf(ask(u"once"_s).second), u"second"_s);
        QTest::ignoreMessage(QtWarningMsg, QRegularExpression(u"no scripted response matches the request"_s));
        const auto [status, body] = ask(u"once"_s);
        QCOMPARE(status, 500);
        QCOMPARE(errorMessageOf(body), u"fake-llm-server: no scripted response matches the request"_s);
        QCOMPARE(server.requests().constLast().responseIndex, -1);
        QVERIFY(server.requests().constLast().ruleName.isEmpty());

        QStringList cycled;
        for (int i = 0; i < 5; ++i)
            cycled.append(contentOf(ask(u"loop"_s).second));
        QCOMPARE(cycled, QStringList({u"a"_s, u"b"_s, u"a"_s, u"b"_s, u"a"_s}));
    }

    void contentFileAndModels()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(QDir(dir.path()).mkpath(u"answers"_s));
        QFile answer(dir.filePath(u"answers/gemm_fast.md"_s));
        QVERIFY(answer.open(QIODevice::WriteOnly));
        answer.write("```cuda\n__global__ void gemm() {}\n```\n");
        answer.close();
        QFile script(dir.filePath(u"script.yaml"_s));
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("models: [gpt-4o, o3]\nrules:\n  - responses:\n      - content_file: answers/gemm_fast.md\n");
        script.close();

        FakeLlmServer server;
        QString error;
        QVERIFY2(server.loadScript(script.fileName(), &error), qPrintable(error));
        QVERIFY(server.listen());
        QNetworkAccessManager nam;
        std::unique_ptr<QNetworkReply> reply(post(nam, server, chatBody(u"x"_s)));
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);
        QCOMPARE(contentOf(reply->readAll()), u"```cuda\n__global__ void gemm() {}\n```\n"_s);

        QUrl modelsUrl = server.baseUrl();
        modelsUrl.setPath(u"/v1/models"_s);
        std::unique_ptr<QNetworkReply> models(nam.get(QNetworkRequest(modelsUrl)));
        QTRY_VERIFY_WITH_TIMEOUT(models->isFinished(), Timeout);
        const QJsonArray data = QJsonDocument::fromJson(models->readAll()).object()[u"data"_s].toArray();
        QCOMPARE(data.size(), 2);
        QCOMPARE(data.at(0)[u"id"_s].toString(), u"gpt-4o"_s);
        QCOMPARE(data.at(1)[u"id"_s].toString(), u"o3"_s);
    }

    void invalidScripts_data()
    {
        QTest::addColumn<QByteArray>("script");
        QTest::addColumn<QString>("errorPart");
        QTest::newRow("missing content_file")
            << QByteArray("rules:\n  - responses: [{content_file: nope.md}]\n") << u"nope.md"_s;
        QTest::newRow("typo in a key") << QByteArray("rules:\n  - name: r\n    responses: [{contnet: x}]\n")
                                       << u"unknown key 'contnet'"_s;
        QTest::newRow("bad regex") << QByteArray("rules:\n  - match: '(['\n    responses: [{content: x}]\n")
                                   << u"invalid regular expression"_s;
        QTest::newRow("unknown fault") << QByteArray("rules:\n  - responses: [{content: x, fault: explode}]\n")
                                       << u"unknown fault 'explode'"_s;
        QTest::newRow("no responses") << QByteArray("rules:\n  - name: empty\n    responses: []\n")
                                      << u"non-empty list of responses"_s;
        QTest::newRow("yaml syntax") << QByteArray("rules: [\n") << u"script:"_s;
    }

    void invalidScripts()
    {
        QFETCH(QByteArray, script);
        QFETCH(QString, errorPart);
        QTemporaryDir dir;
        FakeLlmServer server;
        QString error;
        QVERIFY(!server.loadScriptText(script, dir.path(), &error));
        QVERIFY2(error.contains(errorPart), qPrintable(error));
    }

    void delay()
    {
        FakeLlmServer server;
        QVERIFY(start(server, QByteArray("rules:\n  - responses: [{content: slow, delay_ms: 400}]\n")));
        QNetworkAccessManager nam;
        QElapsedTimer elapsed;
        elapsed.start();
        std::unique_ptr<QNetworkReply> reply(post(nam, server, chatBody(u"x"_s)));
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);
        QVERIFY2(elapsed.elapsed() >= 400, qPrintable(QString::number(elapsed.elapsed())));
        QCOMPARE(contentOf(reply->readAll()), u"slow"_s);
    }

    void errorStatusWithHeaders()
    {
        FakeLlmServer server;
        QVERIFY(start(server, QByteArray(R"(
rules:
  - responses:
      - status: 429
        error_message: "Rate limit reached for gpt-test"
        headers: {retry-after: "1", x-ratelimit-remaining-requests: "0"}
)")));
        QNetworkAccessManager nam;
        std::unique_ptr<QNetworkReply> reply(post(nam, server, chatBody(u"x"_s)));
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);
        QCOMPARE(statusOf(reply.get()), 429);
        QCOMPARE(reply->rawHeader("retry-after"), QByteArray("1"));
        QCOMPARE(reply->rawHeader("x-ratelimit-remaining-requests"), QByteArray("0"));
        const QJsonObject error = QJsonDocument::fromJson(reply->readAll()).object()[u"error"_s].toObject();
        QCOMPARE(error[u"message"_s].toString(), u"Rate limit reached for gpt-test"_s);
        QCOMPARE(error[u"code"_s].toString(), u"rate_limit_exceeded"_s);
        QVERIFY(error.contains(u"type"_s));
        QVERIFY(error.contains(u"param"_s));
    }

    void resetMidStream_data()
    {
        QTest::addColumn<bool>("stream");
        QTest::newRow("streaming") << true;
        QTest::newRow("non-streaming") << false;
    }

    void resetMidStream()
    {
        QFETCH(bool, stream);
        FakeLlmServer server;
        QVERIFY(start(server, QByteArray(R"(
rules:
  - responses:
      - content: "A fairly long answer that is streamed in many pieces so the reset lands in the middle of it."
        chunk_delay_ms: 20
        fault: reset_mid_stream
)")));
        QNetworkAccessManager nam;
        std::unique_ptr<QNetworkReply> reply(post(nam, server, chatBody(u"x"_s, u"gpt-test"_s, stream)));
        QByteArray received;
        connect(reply.get(), &QIODevice::readyRead, this, [&] { received += reply->readAll(); });
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);
        received += reply->readAll();

        QVERIFY2(reply->error() != QNetworkReply::NoError, "a reset must surface as a network error");
        QCOMPARE(server.requestCount(), 1); // the client did not silently retry
        if (stream) {
            QVERIFY2(!sseData(received).isEmpty(), "some chunks arrive before the reset");
            QVERIFY(!received.contains("[DONE]"));
        } else {
            QVERIFY(!QJsonDocument::fromJson(received).isObject());
        }
    }

    void malformedJson_data()
    {
        QTest::addColumn<bool>("stream");
        QTest::newRow("streaming") << true;
        QTest::newRow("non-streaming") << false;
    }

    void malformedJson()
    {
        QFETCH(bool, stream);
        FakeLlmServer server;
        QVERIFY(start(server, QByteArray(R"(
rules:
  - responses:
      - content: "Some answer that will be split into a number of streamed chunks."
        fault: malformed_json
)")));
        QNetworkAccessManager nam;
        std::unique_ptr<QNetworkReply> reply(post(nam, server, chatBody(u"x"_s, u"gpt-test"_s, stream)));
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);
        QCOMPARE(reply->error(), QNetworkReply::NoError);
        QCOMPARE(statusOf(reply.get()), 200);
        const QByteArray body = reply->readAll();
        if (stream) {
            int broken = 0;
            const QList<QByteArray> data = sseData(body);
            for (const QByteArray &event : data) {
                QJsonParseError error{};
                QJsonDocument::fromJson(event, &error);
                if (event != "[DONE]" && error.error != QJsonParseError::NoError)
                    ++broken;
            }
            QCOMPARE(broken, 1);
            QCOMPARE(data.constLast(), QByteArray("[DONE]"));
        } else {
            QJsonParseError error{};
            QJsonDocument::fromJson(body, &error);
            QVERIFY(error.error != QJsonParseError::NoError);
        }
    }

    void dripDeliversTheWholeStreamInPieces()
    {
        FakeLlmServer server;
        QVERIFY(start(
            server,
            QByteArray("rules:\n  - responses: [{content: \"slowly but surely\", fault: drip, chunk_delay_ms: 5}]\n")));
        QNetworkAccessManager nam;
        std::unique_ptr<QNetworkReply> reply(post(nam, server, chatBody(u"x"_s, u"gpt-test"_s, true)));
        int reads = 0;
        QByteArray received;
        connect(reply.get(), &QIODevice::readyRead, this, [&] {
            ++reads;
            received += reply->readAll();
        });
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);
        received += reply->readAll();
        QCOMPARE(reply->error(), QNetworkReply::NoError);
        const QList<QByteArray> data = sseData(received);
        QCOMPARE(data.constLast(), QByteArray("[DONE]"));
        QString text;
        for (const QByteArray &event : data) {
            const QJsonArray choices = QJsonDocument::fromJson(event).object()[u"choices"_s].toArray();
            text += choices.at(0).toObject()[u"delta"_s].toObject()[u"content"_s].toString();
        }
        QCOMPARE(text, u"slowly but surely"_s);
        QVERIFY2(reads > int(data.size()), qPrintable(u"%1 reads for %2 events"_s.arg(reads).arg(data.size())));
    }

    void requestLog()
    {
        QTemporaryDir dir;
        const QString logPath = dir.filePath(u"requests.jsonl"_s);
        FakeLlmServer server;
        QVERIFY(start(server, QByteArray(R"(
rules:
  - name: slow
    match: slow
    responses: [{content: done, delay_ms: 1500}]
  - name: fast
    cycle: true
    responses: [{content: quick}]
)")));
        QVERIFY(server.setLogFile(logPath));
        QNetworkAccessManager nam;

        // The line is written on arrival, before the (delayed) answer.
        std::unique_ptr<QNetworkReply> slow(
            post(nam, server, chatBody(u"slow one"_s, u"gpt-a"_s, false, false, u"sys"_s)));
        QTRY_COMPARE_WITH_TIMEOUT(readAllFile(logPath).count('\n'), 1, Timeout);
        QVERIFY(!slow->isFinished());
        QTRY_VERIFY_WITH_TIMEOUT(slow->isFinished(), Timeout);

        for (const QString &message : {u"second prompt"_s, u"third prompt"_s}) {
            std::unique_ptr<QNetworkReply> reply(post(nam, server, chatBody(message)));
            QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);
        }

        const QList<QByteArray> lines = readAllFile(logPath).trimmed().split('\n');
        QCOMPARE(lines.size(), 3);
        const QStringList prompts{u"sys\nslow one"_s, u"second prompt"_s, u"third prompt"_s};
        const QStringList rules{u"slow"_s, u"fast"_s, u"fast"_s};
        for (int i = 0; i < 3; ++i) {
            const QJsonObject entry = QJsonDocument::fromJson(lines.at(i)).object();
            QCOMPARE(entry[u"index"_s].toInt(), i);
            QCOMPARE(entry[u"prompt"_s].toString(), prompts.at(i));
            QCOMPARE(entry[u"rule"_s].toString(), rules.at(i));
            QCOMPARE(entry[u"path"_s].toString(), u"/v1/chat/completions"_s);
            // The API key is logged only as a hash prefix.
            const QString auth = entry[u"headers"_s][u"authorization"_s].toString();
            QVERIFY2(auth.startsWith(u"sha256:"_s) && !auth.contains(u"sk-test"_s), qPrintable(auth));
        }
        QCOMPARE(QJsonDocument::fromJson(lines.at(0)).object()[u"model"_s].toString(), u"gpt-a"_s);
    }

    void concurrentRequests()
    {
        constexpr int Count = 64;
        FakeLlmServer server;
        QVERIFY(
            start(server, QByteArray("rules:\n  - cycle: true\n    responses: [{content: pong, delay_ms: 1000}]\n")));
        QSignalSpy received(&server, &FakeLlmServer::requestReceived);
        // One manager per request: a single manager opens at most 6 connections per host.
        std::vector<std::unique_ptr<QNetworkAccessManager>> managers;
        std::vector<std::unique_ptr<QNetworkReply>> replies;
        for (int i = 0; i < Count; ++i) {
            managers.push_back(std::make_unique<QNetworkAccessManager>());
            replies.emplace_back(post(*managers.back(), server, chatBody(u"ping %1"_s.arg(i))));
        }
        QTRY_VERIFY_WITH_TIMEOUT(
            std::all_of(replies.begin(), replies.end(), [](const auto &reply) { return reply->isFinished(); }), 30000);
        for (const auto &reply : replies) {
            QCOMPARE(reply->error(), QNetworkReply::NoError);
            QCOMPARE(contentOf(reply->readAll()), u"pong"_s);
        }
        QCOMPARE(received.size(), Count);
        QCOMPARE(server.requestCount(), Count);
        // All were held at once: none was answered before every request had arrived.
        QCOMPARE(server.peakInFlight(), Count);
    }

    void keepAlive()
    {
        FakeLlmServer server;
        QVERIFY(start(server, QByteArray("rules:\n  - cycle: true\n    responses: [{content: again}]\n")));
        QNetworkAccessManager nam;
        for (int i = 0; i < 5; ++i) {
            std::unique_ptr<QNetworkReply> reply(post(nam, server, chatBody(u"x"_s)));
            QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);
            QCOMPARE(contentOf(reply->readAll()), u"again"_s);
        }
        QCOMPARE(server.connectionsAccepted(), 1);
    }

    void segmentedAndPipelinedRequests()
    {
        FakeLlmServer server;
        QVERIFY(
            start(server, QByteArray("rules:\n  - responses: [{content: one}, {content: two}, {content: three}]\n")));
        QTcpSocket socket;
        QByteArray buffer;
        connect(&socket, &QTcpSocket::readyRead, this, [&] { buffer += socket.readAll(); });
        socket.connectToHost(QHostAddress::LocalHost, server.port());
        QTRY_COMPARE_WITH_TIMEOUT(socket.state(), QAbstractSocket::ConnectedState, Timeout);

        const auto request = [](const QByteArray &body) -> QByteArray {
            return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   "Content-Length: "
                + QByteArray::number(body.size()) + "\r\n\r\n" + body;
        };
        const QByteArray first = request(chatBody(u"segmented"_s));
        // Split inside the request line, inside the headers and inside the body.
        const qsizetype cuts[] = {0, 7, 60, first.size() - 10, first.size()};
        for (int i = 0; i + 1 < 5; ++i) {
            socket.write(first.mid(cuts[i], cuts[i + 1] - cuts[i]));
            socket.flush();
            QTest::qWait(30);
            if (i + 2 < 5)
                QCOMPARE(server.requestCount(), 0);
        }
        QTRY_VERIFY2_WITH_TIMEOUT(completeResponseLength(buffer) > 0, buffer.constData(), Timeout);
        auto [head, body] = takeResponse(&buffer);
        QVERIFY2(head.startsWith("HTTP/1.1 200 OK"), head.constData());
        QCOMPARE(contentOf(body), u"one"_s);
        QCOMPARE(server.requests().constFirst().lastUserMessage, u"segmented"_s);

        // Two requests in one write are answered in order on the same connection.
        socket.write(request(chatBody(u"second"_s)) + request(chatBody(u"third"_s)));
        QTRY_VERIFY_WITH_TIMEOUT(completeResponseLength(buffer) > 0, Timeout);
        QCOMPARE(contentOf(takeResponse(&buffer).second), u"two"_s);
        QTRY_VERIFY_WITH_TIMEOUT(completeResponseLength(buffer) > 0, Timeout);
        QCOMPARE(contentOf(takeResponse(&buffer).second), u"three"_s);
        QCOMPARE(server.requests().at(2).lastUserMessage, u"third"_s);
        QCOMPARE(server.connectionsAccepted(), 1);
    }

    void executable()
    {
        const QString program = qEnvironmentVariable("AUTOCOMP_FAKE_LLM_SERVER");
        if (program.isEmpty())
            QSKIP("AUTOCOMP_FAKE_LLM_SERVER is not set (run through ctest)");
        QTemporaryDir dir;
        const QString scriptPath = dir.filePath(u"script.yaml"_s);
        const QString logPath = dir.filePath(u"log.jsonl"_s);
        QFile script(scriptPath);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("rules:\n  - name: only\n    responses: [{content: from the process}]\n");
        script.close();

        QProcess process;
        process.start(program, {u"--script"_s, scriptPath, u"--log"_s, logPath});
        QVERIFY(process.waitForStarted(Timeout));
        QTRY_VERIFY_WITH_TIMEOUT(process.canReadLine(), Timeout);
        const QString firstLine = QString::fromUtf8(process.readLine()).trimmed();
        QVERIFY2(firstLine.startsWith(u"listening on http://127.0.0.1:"_s), qPrintable(firstLine));
        const QUrl base(firstLine.mid(13));

        QNetworkAccessManager nam;
        QUrl url = base;
        url.setPath(u"/v1/chat/completions"_s);
        QNetworkRequest request(url);
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
        std::unique_ptr<QNetworkReply> reply(nam.post(request, chatBody(u"via process"_s)));
        QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), Timeout);
        QCOMPARE(contentOf(reply->readAll()), u"from the process"_s);

        process.kill();
        QVERIFY(process.waitForFinished(Timeout));
        const QList<QByteArray> lines = readAllFile(logPath).trimmed().split('\n');
        QCOMPARE(lines.size(), 1);
        QCOMPARE(QJsonDocument::fromJson(lines.at(0)).object()[u"prompt"_s].toString(), u"via process"_s);

        QProcess broken;
        broken.start(program, {u"--script"_s, dir.filePath(u"missing.yaml"_s)});
        QVERIFY(broken.waitForFinished(Timeout));
        QCOMPARE(broken.exitCode(), 1);
        QVERIFY(broken.readAllStandardError().contains("missing.yaml"));
    }
};

QTEST_GUILESS_MAIN(TestFakeLlmServer)
#include "tst_fake_llm_server.moc"
