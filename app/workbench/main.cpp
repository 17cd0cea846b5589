// lathe-workbench [MODEL.onnx|MODEL.tflite] [--screenshot DIR] [--size WxH]

#include "app/workbench/main_window.h"
#include "app/workbench/screenshot_session.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QRegularExpression>
#include <cstdio>

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("Lathe"));
  QApplication::setApplicationName(QStringLiteral("Workbench"));
  QApplication::setApplicationVersion(QStringLiteral(LATHE_VERSION));

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Lathe workbench: inspect an ONNX model, its graph passes and its IR."));
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("model"), QStringLiteral("ONNX model to open."),
                               QStringLiteral("[MODEL.onnx|MODEL.tflite]"));
  const QCommandLineOption screenshot(
      QStringLiteral("screenshot"),
      QStringLiteral("Open MODEL, compile, run and schedule it, save a picture of the window "
                     "and of each panel into DIR (main_window.png, graph.png, passes.png, "
                     "kernels.png, step_through.png, run.png, profile.png, schedule.png, ...), "
                     "and exit (works with QT_QPA_PLATFORM=offscreen)."),
      QStringLiteral("DIR"));
  parser.addOption(screenshot);
  const QCommandLineOption size(
      QStringLiteral("size"),
      QStringLiteral("Window size, e.g. 1366x768 (the smallest the default layout is made for); "
                     "without it, 1400x900 or the screen's free area when that is smaller."),
      QStringLiteral("WxH"));
  parser.addOption(size);
  parser.process(app);

  const QStringList args = parser.positionalArguments();
  if (args.size() > 1) {
    std::fprintf(stderr, "lathe-workbench: expected at most one model, got %lld\n",
                 static_cast<long long>(args.size()));
    return 2;
  }
  const QString model = args.value(0);

  lathe::workbench::MainWindow window;
  if (parser.isSet(size)) {
    static const QRegularExpression wxh(QStringLiteral(R"(^(\d{3,5})x(\d{3,5})$)"));
    const QRegularExpressionMatch m = wxh.match(parser.value(size));
    if (!m.hasMatch()) {
      std::fprintf(stderr, "lathe-workbench: --size wants WIDTHxHEIGHT (e.g. 1366x768), got %s\n",
                   qPrintable(parser.value(size)));
      return 2;
    }
    window.resize(m.captured(1).toInt(), m.captured(2).toInt());
  }
  if (parser.isSet(screenshot)) {
    if (model.isEmpty()) {
      std::fprintf(stderr, "lathe-workbench: --screenshot needs a MODEL\n");
      return 2;
    }
    // Default layout, not the user's saved one, so shots are reproducible.
    lathe::workbench::ScreenshotSession session(&window, parser.value(screenshot));
    window.show();
    window.openFile(model);
    return QApplication::exec();
  }

  window.restoreSettings();
  window.show();
  window.openFile(model);
  return QApplication::exec();
}
