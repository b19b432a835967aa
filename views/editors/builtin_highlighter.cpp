#include "editors/builtin_highlighter.h"

#include <QColor>
#include <QFont>

namespace autocomp {

namespace {
QTextCharFormat makeFormat(const QColor &color, bool bold = false, bool italic = false)
{
    QTextCharFormat result;
    result.setForeground(color);
    if (bold)
        result.setFontWeight(QFont::Bold);
    result.setFontItalic(italic);
    return result;
}
} // namespace

BuiltinHighlighter::BuiltinHighlighter(QTextDocument *document, Language language, bool darkPalette)
    : QSyntaxHighlighter(document)
    , m_language(language)
{
    // Two sets of colors with enough contrast on white and on near-black backgrounds.
    if (darkPalette) {
        m_keyword = makeFormat(QColor(0x82, 0xaa, 0xff), true);
        m_type = makeFormat(QColor(0x4e, 0xc9, 0xb0));
        m_string = makeFormat(QColor(0xe6, 0xc0, 0x7b));
        m_comment = makeFormat(QColor(0x8b, 0x94, 0x9e), false, true);
        m_preprocessor = makeFormat(QColor(0xd1, 0x9a, 0x66));
        m_number = makeFormat(QColor(0xb5, 0xce, 0xa8));
        m_heading = makeFormat(QColor(0x82, 0xaa, 0xff), true);
        m_code = makeFormat(QColor(0xe6, 0xc0, 0x7b));
        m_key = makeFormat(QColor(0x82, 0xaa, 0xff));
    } else {
        m_keyword = makeFormat(QColor(0x00, 0x33, 0xb3), true);
        m_type = makeFormat(QColor(0x00, 0x6e, 0x6e));
        m_string = makeFormat(QColor(0x9a, 0x3e, 0x00));
        m_comment = makeFormat(QColor(0x5c, 0x63, 0x70), false, true);
        m_preprocessor = makeFormat(QColor(0x80, 0x40, 0x80));
        m_number = makeFormat(QColor(0x1f, 0x6f, 0x2a));
        m_heading = makeFormat(QColor(0x00, 0x33, 0xb3), true);
        m_code = makeFormat(QColor(0x9a, 0x3e, 0x00));
        m_key = makeFormat(QColor(0x00, 0x33, 0xb3));
    }
    m_emphasis.setFontItalic(true);

    switch (language) {
    case Cpp: setupCLike(false); break;
    case Cuda: setupCLike(true); break;
    case Python: setupPython(); break;
    case Markdown: setupMarkdown(); break;
    case Yaml: setupYaml(); break;
    }
}

void BuiltinHighlighter::addRule(const QString &pattern, const QTextCharFormat &format, int group)
{
    m_rules.append(Rule{QRegularExpression(pattern), format, group});
}

void BuiltinHighlighter::addKeywords(const QStringList &words, const QTextCharFormat &format)
{
    addRule(QStringLiteral("\\b(?:") + words.join(QLatin1Char('|')) + QStringLiteral(")\\b"), format);
}

void BuiltinHighlighter::setupCLike(bool cuda)
{
    const QString numberPattern = QStringLiteral(
        "\\b(?:0[xX][0-9a-fA-F']+|[0-9][0-9']*\\.?[0-9]*(?:[eE][+-]?[0-9]+)?)[uUlLfF]*\\b");
    addRule(numberPattern, m_number);
    addKeywords({QStringLiteral("alignas"),      QStringLiteral("auto"),        QStringLiteral("break"),
                 QStringLiteral("case"),         QStringLiteral("catch"),       QStringLiteral("class"),
                 QStringLiteral("const"),        QStringLiteral("constexpr"),   QStringLiteral("continue"),
                 QStringLiteral("default"),      QStringLiteral("delete"),      QStringLiteral("do"),
                 QStringLiteral("else"),         QStringLiteral("enum"),        QStringLiteral("extern"),
                 QStringLiteral("for"),          QStringLiteral("if"),          QStringLiteral("inline"),
                 QStringLiteral("namespace"),    QStringLiteral("new"),         QStringLiteral("noexcept"),
                 QStringLiteral("nullptr"),      QStringLiteral("operator"),    QStringLiteral("private"),
                 QStringLiteral("protected"),    QStringLiteral("public"),      QStringLiteral("restrict"),
                 QStringLiteral("__restrict__"), QStringLiteral("return"),      QStringLiteral("sizeof"),
                 QStringLiteral("static"),       QStringLiteral("static_cast"), QStringLiteral("reinterpret_cast"),
                 QStringLiteral("struct"),       QStringLiteral("switch"),      QStringLiteral("template"),
                 QStringLiteral("this"),         QStringLiteral("throw"),       QStringLiteral("try"),
                 QStringLiteral("typedef"),      QStringLiteral("typename"),    QStringLiteral("union"),
                 QStringLiteral("using"),        QStringLiteral("virtual"),     QStringLiteral("volatile"),
                 QStringLiteral("while"),        QStringLiteral("true"),        QStringLiteral("false")},
                m_keyword);
    addKeywords({QStringLiteral("void"), QStringLiteral("bool"), QStringLiteral("char"), QStringLiteral("short"),
                 QStringLiteral("int"), QStringLiteral("long"), QStringLiteral("float"), QStringLiteral("double"),
                 QStringLiteral("signed"), QStringLiteral("unsigned"), QStringLiteral("size_t"),
                 QStringLiteral("u?int(?:8|16|32|64)_t"), QStringLiteral("std::\\w+"), QStringLiteral("__m\\d+[id]?"),
                 QStringLiteral("half"), QStringLiteral("float[2-4]"), QStringLiteral("dim3")},
                m_type);
    if (cuda)
        addKeywords({QStringLiteral("__global__"), QStringLiteral("__device__"), QStringLiteral("__host__"),
                     QStringLiteral("__shared__"), QStringLiteral("__constant__"), QStringLiteral("__syncthreads"),
                     QStringLiteral("__launch_bounds__"), QStringLiteral("threadIdx"), QStringLiteral("blockIdx"),
                     QStringLiteral("blockDim"), QStringLiteral("gridDim"), QStringLiteral("warpSize")},
                    m_keyword);
    addRule(QStringLiteral("^\\s*#\\s*\\w+.*$"), m_preprocessor);
    addRule(QStringLiteral("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)'"), m_string);
    addRule(QStringLiteral("//.*$"), m_comment);
}

void BuiltinHighlighter::setupPython()
{
    addRule(QStringLiteral("\\b[0-9][0-9_]*\\.?[0-9_]*(?:[eE][+-]?[0-9]+)?j?\\b"), m_number);
    addKeywords(
        {QStringLiteral("and"),    QStringLiteral("as"),      QStringLiteral("assert"),   QStringLiteral("async"),
         QStringLiteral("await"),  QStringLiteral("break"),   QStringLiteral("class"),    QStringLiteral("continue"),
         QStringLiteral("def"),    QStringLiteral("del"),     QStringLiteral("elif"),     QStringLiteral("else"),
         QStringLiteral("except"), QStringLiteral("finally"), QStringLiteral("for"),      QStringLiteral("from"),
         QStringLiteral("global"), QStringLiteral("if"),      QStringLiteral("import"),   QStringLiteral("in"),
         QStringLiteral("is"),     QStringLiteral("lambda"),  QStringLiteral("nonlocal"), QStringLiteral("not"),
         QStringLiteral("or"),     QStringLiteral("pass"),    QStringLiteral("raise"),    QStringLiteral("return"),
         QStringLiteral("try"),    QStringLiteral("while"),   QStringLiteral("with"),     QStringLiteral("yield"),
         QStringLiteral("None"),   QStringLiteral("True"),    QStringLiteral("False")},
        m_keyword);
    addKeywords({QStringLiteral("int"), QStringLiteral("float"), QStringLiteral("str"), QStringLiteral("bool"),
                 QStringLiteral("list"), QStringLiteral("dict"), QStringLiteral("tuple"), QStringLiteral("range"),
                 QStringLiteral("self")},
                m_type);
    addRule(QStringLiteral("^\\s*@[\\w.]+"), m_preprocessor);
    addRule(QStringLiteral("[rbfu]?\"(?:[^\"\\\\]|\\\\.)*\"|[rbfu]?'(?:[^'\\\\]|\\\\.)*'"), m_string);
    addRule(QStringLiteral("#.*$"), m_comment);
}

void BuiltinHighlighter::setupMarkdown()
{
    addRule(QStringLiteral("^#{1,6}\\s.*$"), m_heading);
    addRule(QStringLiteral("(?:\\*\\*|__)[^*_]+(?:\\*\\*|__)"), makeFormat(QColor(), true));
    addRule(QStringLiteral("(?<![*\\w])[*_][^*_\\s][^*_]*[*_](?![*\\w])"), m_emphasis);
    addRule(QStringLiteral("^\\s*(?:[-*+]|\\d+\\.)\\s"), m_keyword);
    addRule(QStringLiteral("`[^`]+`"), m_code);
    addRule(QStringLiteral("\\[[^\\]]+\\]\\([^)]+\\)"), m_type);
}

void BuiltinHighlighter::setupYaml()
{
    addRule(QStringLiteral("^\\s*(?:-\\s+)?([\\w.-]+)\\s*:(?=\\s|$)"), m_key, 1);
    addRule(QStringLiteral("\\b(?:true|false|null|yes|no)\\b"), m_keyword);
    addRule(QStringLiteral("(?<=[\\s:\\[,-])[+-]?[0-9][0-9_]*\\.?[0-9]*(?:[eE][+-]?[0-9]+)?\\b"), m_number);
    addRule(QStringLiteral("\"(?:[^\"\\\\]|\\\\.)*\"|'[^']*'"), m_string);
    addRule(QStringLiteral("(?:^|\\s)#.*$"), m_comment);
}

bool BuiltinHighlighter::highlightSpan(const QString &text, const QString &open, const QString &close, int state,
                                       const QTextCharFormat &spanFormat)
{
    int start = previousBlockState() == state ? 0 : -1;
    int searchFrom = 0;
    if (start < 0) {
        start = text.indexOf(open);
        if (start < 0)
            return false;
        searchFrom = start + open.size();
    }
    while (start >= 0) {
        const int end = text.indexOf(close, searchFrom);
        if (end < 0) {
            setFormat(start, text.size() - start, spanFormat);
            setCurrentBlockState(state);
            return true;
        }
        setFormat(start, end + close.size() - start, spanFormat);
        start = text.indexOf(open, end + close.size());
        searchFrom = start + open.size();
    }
    return false;
}

void BuiltinHighlighter::highlightBlock(const QString &text)
{
    setCurrentBlockState(NoState);

    // A fenced code block in Markdown is shown as code, without inline rules.
    if (m_language == Markdown) {
        const bool fence = text.trimmed().startsWith(QLatin1String("```"));
        const bool inFence = previousBlockState() == InFence;
        if (fence || inFence) {
            setFormat(0, text.size(), m_code);
            if (fence != inFence)
                setCurrentBlockState(InFence);
            return;
        }
    }

    for (const Rule &rule : std::as_const(m_rules)) {
        auto it = rule.pattern.globalMatch(text);
        while (it.hasNext()) {
            const QRegularExpressionMatch match = it.next();
            setFormat(match.capturedStart(rule.group), match.capturedLength(rule.group), rule.format);
        }
    }

    switch (m_language) {
    case Cpp:
    case Cuda: highlightSpan(text, QStringLiteral("/*"), QStringLiteral("*/"), InBlockComment, m_comment); break;
    case Python:
        if (previousBlockState() != InTripleSingle)
            highlightSpan(text, QStringLiteral("\"\"\""), QStringLiteral("\"\"\""), InTripleDouble, m_string);
        if (currentBlockState() == NoState && previousBlockState() != InTripleDouble)
            highlightSpan(text, QStringLiteral("'''"), QStringLiteral("'''"), InTripleSingle, m_string);
        break;
    case Markdown:
    case Yaml: break;
    }
}

} // namespace autocomp
