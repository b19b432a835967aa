// fake-llm-server --script FILE [--port N] [--log FILE] [--timing FILE]
// Serves scripted LLM responses on 127.0.0.1 for integration tests that run the real CLI or GUI.
#include "fake_llm_server.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <cstdio>

using autocomp::test::FakeLlmServer;

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("fake-llm-server"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Local LLM test server answering from a YAML script."));
    parser.addHelpOption();
    const QCommandLineOption scriptOption(QStringLiteral("script"), QStringLiteral("Response script (YAML)."),
                                          QStringLiteral("file"));
    const QCommandLineOption portOption(QStringLiteral("port"),
                                        QStringLiteral("Port to listen on (default: any free)."),
                                        QStringLiteral("port"), QStringLiteral("0"));
    const QCommandLineOption logOption(QStringLiteral("log"),
                                       QStringLiteral("Append one JSON line per received request to this file."),
                                       QStringLiteral("file"));
    const QCommandLineOption timingOption(
        QStringLiteral("timing"),
        QStringLiteral("Append a line per answered request: its X-Autocomp-Request header and "
                       "the monotonic ns when it was read and when its answer was written."),
        QStringLiteral("file"));
    const QCommandLineOption closeOption(
        QStringLiteral("close-after-answer"),
        QStringLiteral("End every answer by closing the connection: 'delimited' (no length, no "
                       "chunking: the close ends the body) or 'framed' (framed, keep-alive "
                       "announced, closed all the same)."),
        QStringLiteral("mode"));
    parser.addOptions({scriptOption, portOption, logOption, timingOption, closeOption});
    parser.process(app);

    if (!parser.isSet(scriptOption)) {
        std::fprintf(stderr, "fake-llm-server: --script is required\n");
        return 2;
    }
    bool portOk = false;
    const uint port = parser.value(portOption).toUInt(&portOk);
    if (!portOk || port > 65535) {
        std::fprintf(stderr, "fake-llm-server: invalid --port %s\n", qPrintable(parser.value(portOption)));
        return 2;
    }

    FakeLlmServer server;
    if (parser.isSet(closeOption)) {
        const QString mode = parser.value(closeOption);
        if (mode == QLatin1String("delimited"))
            server.setCloseAfterAnswer(FakeLlmServer::CloseAfterAnswer::Delimited);
        else if (mode == QLatin1String("framed"))
            server.setCloseAfterAnswer(FakeLlmServer::CloseAfterAnswer::Framed);
        else {
            std::fprintf(stderr, "fake-llm-server: --close-after-answer: '%s' is not delimited or framed\n",
                         qPrintable(mode));
            return 2;
        }
    }
    QString error;
    if (!server.loadScript(parser.value(scriptOption), &error)) {
        std::fprintf(stderr, "fake-llm-server: %s\n", qPrintable(error));
        return 1;
    }
    if (parser.isSet(logOption) && !server.setLogFile(parser.value(logOption))) {
        std::fprintf(stderr, "fake-llm-server: cannot open log file %s\n", qPrintable(parser.value(logOption)));
        return 1;
    }
    if (parser.isSet(timingOption) && !server.setTimingFile(parser.value(timingOption))) {
        std::fprintf(stderr, "fake-llm-server: cannot open timing file %s\n", qPrintable(parser.value(timingOption)));
        return 1;
    }
    if (!server.listen(quint16(port))) {
        std::fprintf(stderr, "fake-llm-server: cannot listen on port %u: %s\n", port, qPrintable(server.errorString()));
        return 1;
    }
    // Tests wait for this line to learn the port, so it comes first and is flushed at once.
    std::printf("listening on %s\n", qPrintable(server.baseUrl().toString()));
    std::fflush(stdout);
    return app.exec();
}
